"""NaN in Metal reductions (checked MSL; there is no Mac here): max / min / absmax keep a NaN as torch does, with
NaN tests that read the bits (fast math may fold ``x != x``) and a ``simd_any`` guard around ``simd_max`` /
``simd_min``, on the simdgroup path and core's generic fold."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang_metal.mslcheck import check_msl

M, N, BLOCK_M = 8, 64, 4
REDUCERS = {"max": T.reduce_max, "min": T.reduce_min, "absmax": T.reduce_absmax, "sum": T.reduce_sum}


def _row_reduce(kind: str, threads: int, dtype: str):
    reducer = REDUCERS[kind]

    @T.prim_func
    def row_reduce(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, BLOCK_M), threads=threads) as bx:
            x = T.alloc_fragment((BLOCK_M, N), dtype)
            r = T.alloc_fragment((BLOCK_M,), dtype)
            T.copy(A[bx * BLOCK_M, 0], x)
            reducer(x, r, dim=1)
            T.copy(r, B[bx * BLOCK_M])

    return row_reduce


@pytest.mark.parametrize("kind", list(REDUCERS))
@pytest.mark.parametrize("threads", [128, 1], ids=["simdgroups", "generic"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_reductions_keep_nan_in_checked_msl(kind, threads, dtype, clang22):
    msl = tilelang.lower(_row_reduce(kind, threads, dtype), target="metal").kernel_source
    result = check_msl(msl, name=f"reduce_{kind}_{threads}_{dtype}.metal", clang=clang22)
    assert result.ok, result.diagnostics
    folds = [line for line in msl.splitlines() if "select(" in line]
    if kind == "sum":
        assert not folds
        return
    # every fold tests its element's bits for NaN, and no `x != x` is left to fast math
    assert folds and all("as_type<uint>" in line for line in folds), folds
    assert " != " not in msl
    if threads > 1:
        simd = "simd_min" if kind == "min" else "simd_max"
        assert any(f"select({simd}(" in line and "simd_sum(" in line and "simd_any(" in line for line in folds), folds
