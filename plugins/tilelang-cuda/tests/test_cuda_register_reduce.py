"""Row reductions of register tiles on CUDA (issue 28: softmax / RMSNorm far behind the reference in SASS).

A tile of a ``T.Parallel(1, N)`` program is spread over the threads (not held whole by every thread), in runs of
16 bytes per thread (one 128-bit load / store each), and ``T.reduce_*`` of it folds each thread's registers and
combines the threads with warp shuffles (`tilelang_cuda.tileops.reduce.REGISTER_REDUCE`) instead of staging the
tile through shared memory for one warp. Checked on the emitted CUDA and, through the SIMT emulator, against
torch.
"""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T

LOG2E = 1.44269504


def _softmax(M: int, N: int, block_N: int, threads: int = 128):
    """The reference example's row softmax (one row a block, base-2 log-sum-exp over `block_N` chunks)."""

    @T.prim_func
    def softmax(X: T.Tensor((M, N), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(M, threads=threads) as row:
            x = T.alloc_fragment((1, block_N), "float16")
            y = T.alloc_fragment((1, block_N), "float16")
            e = T.alloc_fragment((1, block_N), "float32")
            mx = T.alloc_fragment((1,), "float16")
            total = T.alloc_fragment((1,), "float32")
            lse = T.alloc_fragment((1,), "float32")
            T.fill(lse, -T.infinity("float32"))
            for n in T.Pipelined(T.ceildiv(N, block_N)):
                T.copy(X[row, n * block_N], x)
                T.reduce_max(x, mx, dim=1, clear=True)
                for i, j in T.Parallel(1, block_N):
                    e[i, j] = T.exp2(x[i, j] * LOG2E - mx[i] * LOG2E)
                T.reduce_sum(e, total, dim=1, clear=True)
                for i in T.Parallel(1):
                    lse[i] = mx[i] * LOG2E + T.log2(T.exp2(lse[i] - mx[i] * LOG2E) + total[i])
            for n in T.Pipelined(T.ceildiv(N, block_N)):
                T.copy(X[row, n * block_N], x)
                for i, j in T.Parallel(1, block_N):
                    y[i, j] = T.exp2(x[i, j] * LOG2E - lse[i])
                T.copy(y, Y[row, n * block_N])

    return softmax


def _rms_norm(M: int, N: int, threads: int = 128):
    @T.prim_func
    def rms_norm(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=threads) as row:
            a = T.alloc_fragment((1, N), "float32")
            sq = T.alloc_fragment((1, N), "float32")
            inv = T.alloc_fragment((1,), "float32")
            T.copy(A[row:row + 1, :], a)
            for i, j in T.Parallel(1, N):
                sq[i, j] = a[i, j] * a[i, j]
            T.reduce_sum(sq, inv, dim=1)
            for i in T.Parallel(1):
                inv[i] = T.rsqrt(inv[i] / N + 1e-12)
            for i, j in T.Parallel(1, N):
                a[i, j] *= inv[i]
            T.copy(a, B[row:row + 1, :])

    return rms_norm


def _tile_reduce(kind: str, M: int, N: int, block_M: int, dtype: str, clear: bool = True, threads: int = 128):
    """Rows of a ``block_M x N`` tile reduced into a (partitioned) fragment copied out; ``clear=False`` folds
    into the destination's 1.0s."""
    reducer = {"sum": T.reduce_sum, "max": T.reduce_max, "min": T.reduce_min, "absmax": T.reduce_absmax}[kind]

    @T.prim_func
    def tile_reduce(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(M // block_M, threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), dtype)
            r = T.alloc_fragment((block_M,), dtype)
            T.copy(A[bx * block_M, 0], x)
            T.fill(r, 1.0)
            reducer(x, r, dim=1, clear=clear)
            T.copy(r, B[bx * block_M])

    return tile_reduce


def _lower(func, arch: str = "sm_80"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target={"kind": "cuda", "arch": arch})


def _kernel_body(artifact) -> str:
    return artifact.kernel_source.rsplit('extern "C" __global__', 1)[1]


def _local_arrays(body: str) -> dict[str, int]:
    return {name: int(n) for name, n in re.findall(r"alignas\(\d+\) \w+ (\w+)\[(\d+)\];", body)}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_softmax_row_is_spread_over_threads_in_128_bit_runs(arch):
    body = _kernel_body(_lower(_softmax(2, 1024, 1024), arch))
    # each thread holds 8 of the row's 1024 elements (one 16-byte run), not the whole row
    assert max(_local_arrays(body).values()) <= 8, _local_arrays(body)
    assert re.search(r"\*\(uint4\*\)\(X_ptr", body) and re.search(r"\*\(uint4\*\)\(Y_ptr", body), body
    # registers folded, threads combined by shuffles; no tile staged through shared memory for one warp
    assert "tl_warp_max(" in body and "tl_warp_sum(" in body and "_stage" not in body, body
    assert "threadIdx.x) < 32" not in body, body


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_rms_norm_row_is_spread_over_threads_in_128_bit_runs(arch):
    body = _kernel_body(_lower(_rms_norm(2, 1024), arch))
    assert all(n <= 8 for n in _local_arrays(body).values()), _local_arrays(body)
    assert re.search(r"\*\(float4\*\)\(A_ptr", body) and re.search(r"\*\(float4\*\)\(B_ptr", body), body
    assert "tl_warp_sum(" in body and "_stage" not in body, body


def test_softmax_emulated_matches_torch():
    M, N = 2, 2048  # two chunks of 1024: the reductions' shared partials are reused across loop iterations
    artifact = _lower(_softmax(M, N, 1024))
    x = (torch.randn(M, N) * 3).half()
    y = torch.zeros(M, N, dtype=torch.float16)
    emulate(artifact, x, y)
    torch.testing.assert_close(y.float(), torch.softmax(x.float(), dim=1), atol=2e-3, rtol=1e-2)


def test_rms_norm_emulated_matches_torch():
    M, N = 2, 1024
    artifact = _lower(_rms_norm(M, N))
    a = torch.randn(M, N)
    b = torch.zeros(M, N)
    emulate(artifact, a, b)
    want = a * torch.rsqrt(a.pow(2).mean(dim=1, keepdim=True) + 1e-12)
    torch.testing.assert_close(b, want, atol=1e-5, rtol=1e-4)


# (M, N, block_M, dtype, threads): several warps a row (width 64 of 128 threads: 2 warps, two rows a pass), every
# thread in every row (4 warps), one warp holding every row (no shared memory at all), and 8-thread rows
# (butterflies inside a warp, 16 rows a pass)
SHAPES = [(8, 256, 4, "float32", 128), (4, 1024, 4, "float16", 128), (4, 1024, 4, "float16", 32),
          (32, 32, 16, "float32", 128)]


@pytest.mark.parametrize("kind", ["sum", "max", "min", "absmax"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tile_row_reductions_emulated_match_torch(kind, shape):
    M, N, block_M, dtype, threads = shape
    artifact = _lower(_tile_reduce(kind, M, N, block_M, dtype, threads=threads))
    body = _kernel_body(artifact)
    assert "_stage" not in body and "tl_warp_" in body, body
    if threads == 32:
        assert "__shared__" not in body, body
    a = torch.randn(M, N).to(getattr(torch, dtype))
    a[1, 5] = float("nan") if kind != "sum" else a[1, 5]  # a NaN row reduces to NaN (max / min keep it)
    b = torch.zeros(M, dtype=a.dtype)
    emulate(artifact, a, b)
    ref = {"sum": lambda t: t.float().sum(1), "max": lambda t: t.float().amax(1), "min": lambda t: t.float().amin(1),
           "absmax": lambda t: t.float().abs().amax(1)}[kind](a)
    assert torch.equal(b.isnan(), ref.isnan()), (b, ref)
    tol = 2e-2 if dtype == "float16" else 1e-4
    torch.testing.assert_close(b.float().nan_to_num(), ref.nan_to_num(), atol=tol, rtol=tol)


def test_reduction_without_clear_folds_into_destination_emulated():
    M, N, block_M = 8, 256, 4
    artifact = _lower(_tile_reduce("max", M, N, block_M, "float32", clear=False))
    a = torch.randn(M, N) * 0.2  # every row's max below 1.0 except row 3's
    a[3, 7] = 5.0
    b = torch.zeros(M)
    emulate(artifact, a, b)
    torch.testing.assert_close(b, torch.clamp(a.amax(1), min=1.0))
