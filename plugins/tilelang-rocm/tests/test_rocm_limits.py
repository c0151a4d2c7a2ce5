"""LDS and scratch limits: LLVM's AMDGPU backend ends the process (``exit(1)``, no Python exception) on a kernel
over the GPU's LDS or scratch, so such a kernel must be refused first with a clear LoweringError, and T.gemm's C
staging tile must shrink to the LDS the kernel's own tiles leave (bfloat16 tiles take float32's room once TVM
legalizes them).
The builds run in a child interpreter: a regression ends that process, not the test session."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tilelang_rocm.limits import lds_limit, padded, scratch_limit

# found by the fuzzer (seed 20261302): A_s + B_s (bf16, stored as fp32: 48 KiB) + C's 32 KiB staging tile = 80 KiB
FUZZ_GEMM = """
@T.prim_func
def kernel(A: T.Tensor((180, 210), 'bfloat16'), B: T.Tensor((65, 180), 'bfloat16'),
           C: T.Tensor((210, 65), 'float32')):
    with T.Kernel(T.ceildiv(65, 64), T.ceildiv(210, 128), threads=256) as (bx, by):
        A_s = T.alloc_shared((64, 128), 'bfloat16')
        B_s = T.alloc_shared((64, 64), 'bfloat16')
        C_f = T.alloc_fragment((128, 64), 'float32')
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(180, 64), num_stages=1):
            T.copy(A[k * 64, by * 128], A_s)
            T.copy(B[bx * 64, k * 64], B_s)
            T.gemm(A_s, B_s, C_f, transpose_A=True, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.copy(C_f, C[by * 128, bx * 64])
"""

# one fp32 shared tile of ROWS x 256: 1 KiB a row
SHARED_TILE = """
@T.prim_func
def kernel(A: T.Tensor((ROWS, 256), 'float32'), C: T.Tensor((ROWS, 256), 'float32')):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((ROWS, 256), 'float32')
        T.copy(A[0, 0], A_s)
        T.copy(A_s, C[0, 0])
"""

# a per-thread array of 4 MB: far over any GPU's scratch
BIG_LOCAL = """
@T.prim_func
def kernel(A: T.Tensor((1000000,), 'float32'), I: T.Tensor((64,), 'int32'), C: T.Tensor((64,), 'float32')):
    with T.Kernel(1, threads=64) as bx:
        buf = T.alloc_local((1000000,), 'float32')
        tx = T.get_thread_binding()
        for i in T.serial(1000000):
            buf[i] = A[i]
        C[tx] = buf[I[tx]]
"""


def _lower_in_child(folder: Path, kernel: str, mcpu: str = "gfx942") -> subprocess.CompletedProcess:
    """Lower `kernel` for rocm `mcpu` in a child interpreter; it prints the kernels' LDS bytes, or the error."""
    script = textwrap.dedent("""
        import warnings
        import tilelang
        import tilelang.language as T
        from tilelang.errors import LoweringError
        {kernel}
        warnings.simplefilter("ignore")
        try:
            art = tilelang.lower(kernel, target={{"kind": "rocm", "mcpu": "{mcpu}"}})
        except LoweringError as exc:
            print("LoweringError:", exc)
        else:
            assert art.files["kernel.hsaco"][:4] == b"\\x7fELF"
            print("lds", sorted(r["lds_bytes"] for r in art.metadata["resources"].values()))
    """).format(kernel=kernel, mcpu=mcpu)
    path = folder / f"lds_{mcpu}_{len(list(folder.iterdir()))}.py"  # kernels must live in a file
    path.write_text(script)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=600)


def _output(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, f"the build ended the process (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


def test_gemm_stages_c_through_the_lds_its_tiles_leave(lld22, tmp_path):
    out = _output(_lower_in_child(tmp_path, FUZZ_GEMM))
    assert out.startswith("lds ["), out
    (lds,) = eval(out.split("lds ", 1)[1])
    assert lds <= 64 * 1024


def test_a_kernel_over_the_lds_limit_is_a_lowering_error(lld22, tmp_path):
    out = _output(_lower_in_child(tmp_path, SHARED_TILE.replace("ROWS", "256")))  # 256 KiB: no AMD GPU has that much
    assert "LoweringError: kernel 'kernel_kernel' needs 262144 bytes of LDS (shared memory) but gfx942 allows " \
           "65536 per workgroup: A_s (float32, 262144 B)" in out, out


def test_a_kernel_over_the_scratch_limit_is_a_lowering_error(lld22, tmp_path):
    out = _output(_lower_in_child(tmp_path, BIG_LOCAL))
    assert "LoweringError: kernel 'kernel_kernel' needs 4000000 bytes of per-thread local memory but gfx942 allows " \
           "131056 of scratch per thread: buf (float32, 4000000 B)" in out, out


def test_limits():
    assert lds_limit("gfx942") == lds_limit("gfx90a") == lds_limit("gfx1100") == 65536
    assert lds_limit("gfx950") == 160 * 1024
    assert padded(14) == 16 and padded(32) == 32
    # LLVM's limits (its "stack frame size (N) exceeds limit (M)" messages)
    assert scratch_limit("gfx942") == scratch_limit("gfx90a") == scratch_limit("gfx950") == 131056
    assert (scratch_limit("gfx1100"), scratch_limit("gfx1200")) == (262136, 2097144)


def test_gfx950_has_more_lds(lld22, tmp_path):
    kernel = SHARED_TILE.replace("ROWS", "128")  # 128 KiB: over gfx942's LDS, within gfx950's
    assert "lds [131072]" in _output(_lower_in_child(tmp_path, kernel, "gfx950"))
    assert "needs 131072 bytes of LDS" in _output(_lower_in_child(tmp_path, kernel, "gfx942"))
