"""Cached CPU kernels called through TVM-FFI's C ABI with ctypes (`tilelang_cpu.direct_call`), as a process that
has not imported ``tvm_ffi`` does: results against torch, argument checks before the call, kernel errors, threads,
the libraries it declines, and a warm new process that imports neither ``tvm`` nor ``tvm_ffi``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.cache.manager import kernel_cache
from tilelang.errors import KernelArgumentError
from tilelang.jit import JITKernel
from tilelang_cpu import direct_call, execution_backend


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


@tilelang.jit(out_idx=[-1], target="cpu")
def rows_add(N, block=4):
    """Z = X + Y for any number of rows (a symbolic extent)."""
    m = T.dynamic("m")

    @T.prim_func
    def main(X: T.Tensor((m, N), "float32"), Y: T.Tensor((m, N), "float32"), Z: T.Tensor((m, N), "float32")):
        with T.Kernel(T.ceildiv(m, block), is_cpu=True) as bx:
            for i, j in T.Parallel(block, N):
                if bx * block + i < m:
                    Z[bx * block + i, j] = X[bx * block + i, j] + Y[bx * block + i, j]

    return main


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
    for factory in (axpb, rows_add):  # each test compiles into its own cache directory
        factory.clear_kernels()
    yield path
    kernel_cache.clear(disk=False)


def direct(kernel: JITKernel, monkeypatch: pytest.MonkeyPatch) -> JITKernel:
    """`kernel` loaded again from the disk cache, its library called through `direct_call`."""
    monkeypatch.setattr(execution_backend, "prefer_direct", lambda: True)
    artifact = kernel_cache.load_artifact(kernel.cache_key)
    assert artifact is not None and artifact.rt_mod is None
    again = JITKernel(artifact, kernel.out_idx, "tvm_ffi", cache_key=kernel.cache_key, from_cache=True)
    assert again._launcher.__module__ == "tilelang_cpu.direct_call"
    return again


def test_cached_kernel_with_scalars_runs_through_direct_call(monkeypatch):
    kernel = direct(axpb(32, 16), monkeypatch)
    a, b = torch.randn(32, 16), torch.randn(32, 16)
    torch.testing.assert_close(kernel(a, b, 0.5, 3), a * 0.5 + b + 3)
    torch.testing.assert_close(kernel(a, b, 2, -1), a * 2 + b - 1)  # an int for the float scalar, as tvm_ffi takes


def test_symbolic_extents_are_passed_per_call(monkeypatch):
    kernel = direct(rows_add(8), monkeypatch)
    for rows in (5, 13, 1):
        x, y = torch.randn(rows, 8), torch.randn(rows, 8)
        torch.testing.assert_close(kernel(x, y), x + y)


def test_bad_arguments_are_refused_before_the_library_is_called(monkeypatch):
    kernel = direct(axpb(32, 16), monkeypatch)
    a, b = torch.randn(32, 16), torch.randn(32, 16)
    with pytest.raises(KernelArgumentError, match="'B'.*shape"):
        kernel(a, torch.randn(16, 16), 1.0, 0)
    with pytest.raises(KernelArgumentError, match="'A'.*dtype"):
        kernel(a.double(), b, 1.0, 0)
    with pytest.raises(KernelArgumentError, match="'A'.*contiguous"):
        kernel(torch.randn(16, 32).t(), b, 1.0, 0)
    with pytest.raises(KernelArgumentError, match="takes 4 argument"):
        kernel(a, b, 1.0)
    offset = torch.randn(32 * 16 + 1)[1:].view(32, 16)  # element-aligned only: realigned, not refused
    torch.testing.assert_close(kernel(offset, b, 1.0, 0), offset + b)
    rows = direct(rows_add(8), monkeypatch)
    with pytest.raises(KernelArgumentError, match="symbolic 'm'"):
        rows(torch.randn(5, 8), torch.randn(6, 8))


def test_an_error_raised_by_the_kernel_keeps_its_kind_and_message(monkeypatch):
    kernel = direct(axpb(32, 16), monkeypatch)
    a, b, c = torch.randn(32, 16), torch.randn(32, 16), torch.empty(32, 16)
    with pytest.raises(TypeError, match="argument #3"):  # the kernel's own check: a float for the int32 `k`
        kernel._launcher(a, b, 1.0, 2.5, c)
    kernel._launcher(a, b, 1.0, 2, c)  # and the launcher works again afterwards
    torch.testing.assert_close(c, a + b + 2)


def test_threads_calling_one_kernel_use_their_own_arguments(monkeypatch):
    kernel = direct(rows_add(8), monkeypatch)
    failures = []

    def work(seed: int) -> None:
        gen = torch.Generator().manual_seed(seed)
        for rows in range(1, 40):
            x, y = torch.randn(rows, 8, generator=gen), torch.randn(rows, 8, generator=gen)
            if not torch.equal(kernel(x, y), x + y):
                failures.append((seed, rows))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_exported_symbols_of_a_kernel_library():
    kernel = axpb(32, 16)
    image = kernel_cache.load_artifact(kernel.cache_key).files["kernel.so"]
    symbols = direct_call.exported_symbols(image)
    assert "__tvm_ffi_main" in symbols and "__TVMBackendParallelLaunch" in symbols
    assert "TVMFFIErrorSetRaisedFromCStrParts" not in symbols  # undefined here: the runtime provides it
    assert direct_call.exported_symbols(b"#!/bin/sh\n") is None
    assert direct_call.exported_symbols(image[:100]) is None


@pytest.mark.parametrize("extra", ["__TVMBackendSomethingNew", "__tvm_ffi__library_ctx"])
def test_a_library_needing_more_takes_the_tvm_ffi_path(monkeypatch, extra):
    kernel = axpb(32, 16)
    real = direct_call.exported_symbols
    monkeypatch.setattr(direct_call, "exported_symbols", lambda image: real(image) | {extra})
    monkeypatch.setattr(execution_backend, "prefer_direct", lambda: True)
    artifact = kernel_cache.load_artifact(kernel.cache_key)
    assert direct_call.load_direct(artifact, artifact.files.paths["kernel.so"]) is None
    again = JITKernel(artifact, kernel.out_idx, "tvm_ffi")
    assert type(again._launcher).__module__ == "tvm_ffi.core"
    a, b = torch.randn(32, 16), torch.randn(32, 16)
    torch.testing.assert_close(again(a, b, 1.0, 0), a + b)


WARM = """
import json, sys, torch
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

a, b = torch.randn(64, 16), torch.randn(64, 16)
kernel = add(64, 16)
ok = bool(torch.equal(kernel(a, b), a + b))
print(json.dumps({"from_cache": kernel.from_cache, "tvm": "tvm" in sys.modules, "tvm_ffi": "tvm_ffi" in sys.modules,
                  "launcher": getattr(kernel._launcher, "__module__", None), "ok": ok}))
"""


def test_warm_new_process_imports_neither_tvm_nor_tvm_ffi(cache_dir):
    script = cache_dir.parent / "warm.py"
    script.write_text(WARM)
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir)}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    cold, warm = (json.loads(run.stdout.splitlines()[-1]) for run in runs)
    assert cold["from_cache"] is False and cold["tvm"] and cold["ok"]
    assert warm == {"from_cache": True, "tvm": False, "tvm_ffi": False, "launcher": "tilelang_cpu.direct_call",
                    "ok": True}
