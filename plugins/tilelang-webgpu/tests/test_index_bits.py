"""WebGPU indexes in 32 bits (``index_bits`` pipeline option): WGSL has no 64-bit integers (issue 30)."""

from __future__ import annotations

from typing import Any

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


def scale(M: Any, N: int = 32768) -> Any:
    @T.prim_func
    def scale(A: T.Tensor((M, N), "int32"), B: T.Tensor((M, N), "int32")):
        with T.Kernel(N // 1024, M, threads=256) as (bx, by):
            for j in T.Parallel(1024):
                B[by, bx * 1024 + j] = A[by, bx * 1024 + j] * 2

    return scale


def test_dynamic_rows_keep_32_bit_wgsl() -> None:
    src = tilelang.lower(scale(T.dynamic("m")), target="webgpu").kernel_source
    assert "A_ptr[" in src and "i64" not in src


def test_a_static_tensor_past_int32_is_refused() -> None:
    with pytest.raises(LoweringError, match=r"buffer A has 2147549184 elements.*target .webgpu. indexes in 32 bits"):
        tilelang.lower(scale(65538), target="webgpu")
