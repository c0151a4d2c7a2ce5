"""CPU kernels called with NumPy arrays (`tilelang.jit.host_arrays`): results against NumPy, outputs returned as
arrays, the same argument checks as for torch tensors, both kinds on one kernel, misaligned arrays, and a warm new
process that computes on NumPy arrays without importing torch, tvm or tvm_ffi."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.cache.manager import kernel_cache
from tilelang.errors import KernelArgumentError
from tilelang.jit import JITKernel
from tilelang_cpu import execution_backend


@tilelang.jit(out_idx=[-1], target="cpu")
def axpb(M, N, block_M=8):
    """C = A * s + B + k, with a float and an int scalar."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), s: T.float32, k: T.int32,
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] * s + B[bx * block_M + i, j] + T.cast(k, "float32")

    return main


@tilelang.jit(target="cpu")
def scale_rows(N, block=4):
    """X[i, :] *= 2 in place, for any number of rows (a symbolic extent); int16 data."""
    m = T.dynamic("m")

    @T.prim_func
    def main(X: T.Tensor((m, N), "int16")):
        with T.Kernel(T.ceildiv(m, block), is_cpu=True) as bx:
            for i, j in T.Parallel(block, N):
                if bx * block + i < m:
                    X[bx * block + i, j] = X[bx * block + i, j] * T.int16(2)

    return main


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
    for factory in (axpb, scale_rows):
        factory.clear_kernels()
    yield path
    kernel_cache.clear(disk=False)


def cached(kernel: JITKernel, monkeypatch: pytest.MonkeyPatch, direct: bool) -> JITKernel:
    """`kernel` loaded again from the disk cache; ``direct``: called through `tilelang_cpu.direct_call` (NumPy
    data passed as pointers), else through the tvm_ffi module (NumPy data passed as torch views)."""
    monkeypatch.setattr(execution_backend, "prefer_direct", lambda: direct)
    artifact = kernel_cache.load_artifact(kernel.cache_key)
    again = JITKernel(artifact, kernel.out_idx, "tvm_ffi", cache_key=kernel.cache_key, from_cache=True)
    assert (getattr(again._launcher, "__module__", None) == "tilelang_cpu.direct_call") == direct
    return again


@pytest.mark.parametrize("direct", [True, False], ids=["direct_call", "tvm_ffi"])
def test_numpy_arrays_in_numpy_array_out(monkeypatch, direct):
    kernel = cached(axpb(32, 16), monkeypatch, direct)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((32, 16), dtype=np.float32), rng.standard_normal((32, 16), dtype=np.float32)
    c = kernel(a, b, 0.5, np.int32(3))
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (32, 16)
    np.testing.assert_allclose(c, a * 0.5 + b + 3, rtol=1e-6)
    # the same kernel object keeps taking torch tensors, before and after
    x, y = torch.from_numpy(a), torch.from_numpy(b)
    torch.testing.assert_close(kernel(x, y, 2.0, 1), x * 2 + y + 1)
    np.testing.assert_allclose(kernel(a, b, 2.0, 1), a * 2 + b + 1, rtol=1e-6)


def test_in_place_kernel_with_symbolic_rows_and_a_misaligned_array(monkeypatch):
    kernel = cached(scale_rows(8), monkeypatch, True)
    for rows in (5, 13):
        x = np.arange(rows * 8, dtype=np.int16).reshape(rows, 8)
        assert kernel(x) is None
        np.testing.assert_array_equal(x, np.arange(rows * 8, dtype=np.int16).reshape(rows, 8) * 2)
    raw = np.zeros(5 * 8 * 2 + 1, dtype=np.uint8)
    odd = raw[1:].view(np.int16).reshape(5, 8)  # one byte off: not even element-aligned
    assert odd.ctypes.data % 2 == 1
    odd[...] = 3
    kernel(odd)  # run on an aligned copy, written back
    np.testing.assert_array_equal(odd, np.full((5, 8), 6, dtype=np.int16))


def test_bad_numpy_arguments_name_the_parameter(monkeypatch):
    kernel = cached(axpb(32, 16), monkeypatch, True)
    a = np.zeros((32, 16), dtype=np.float32)
    with pytest.raises(KernelArgumentError, match="'B'.*shape"):
        kernel(a, np.zeros((16, 16), dtype=np.float32), 1.0, 0)
    with pytest.raises(KernelArgumentError, match="'A'.*dtype float32, got float64"):
        kernel(a.astype(np.float64), a, 1.0, 0)
    with pytest.raises(KernelArgumentError, match="'A'.*C-contiguous.*ascontiguousarray"):
        kernel(np.zeros((16, 32), dtype=np.float32).T, a, 1.0, 0)
    with pytest.raises(KernelArgumentError, match="takes 4 argument"):
        kernel(a, a, 1.0)
    with pytest.raises(KernelArgumentError, match="'B'.*numpy.ndarray.*torch.Tensor"):
        kernel(a, torch.zeros(32, 16), 1.0, 0)
    with pytest.raises(KernelArgumentError, match="'s'.*scalar"):
        kernel(a, a, np.ones(1, dtype=np.float32), 0)
    rows = cached(scale_rows(8), monkeypatch, True)
    with pytest.raises(KernelArgumentError, match="'X'.*dtype int16"):
        rows(np.zeros((4, 8), dtype=np.int32))


WARM = """
import json, sys
import numpy as np
import tilelang
import tilelang.language as T

@tilelang.jit(out_idx=[-1], target="cpu")
def add(M, N, block_M=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M // block_M, is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
    return main

rng = np.random.default_rng(1)
a, b = rng.standard_normal((64, 16), dtype=np.float32), rng.standard_normal((64, 16), dtype=np.float32)
kernel = add(64, 16)
c = kernel(a, b)
print(json.dumps({"from_cache": kernel.from_cache, "tvm": "tvm" in sys.modules, "torch": "torch" in sys.modules,
                  "launcher": getattr(kernel._launcher, "__module__", None),
                  "ok": isinstance(c, np.ndarray) and bool(np.array_equal(c, a + b))}))
"""


def test_warm_new_process_on_numpy_arrays_imports_no_torch(cache_dir):
    script = cache_dir.parent / "warm_numpy.py"
    script.write_text(WARM)
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir)}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    cold, warm = (json.loads(run.stdout.splitlines()[-1]) for run in runs)
    assert cold["from_cache"] is False and cold["ok"]  # compiling imports TVM (and torch with it)
    assert warm == {"from_cache": True, "tvm": False, "torch": False, "launcher": "tilelang_cpu.direct_call",
                    "ok": True}
