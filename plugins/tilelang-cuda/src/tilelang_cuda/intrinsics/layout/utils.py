"""Helpers of hand-written mma.sync kernels: where a lane's ldmatrix row starts, the accumulator store map, the
MMA atom of a dtype."""

from __future__ import annotations

from typing import Any

from tilelang.layout import get_swizzle_layout, make_mma_swizzle_layout
from tilelang_cuda.intrinsics.layout.mma_layout import (
    a_fragment_inverse,
    c_fragment,
    ldmatrix_32x4_to_shared_16x8_layout_a,
    ldmatrix_32x4_to_shared_16x8_layout_b,
    ldmatrix_32x8_to_shared_16x16_layout,
    ldmatrix_32x16_to_shared_16x32_layout_a,
    ldmatrix_32x16_to_shared_16x32_layout_b,
    ldmatrix_trans_32x8_to_shared_16x16_layout,
    mma_store_32x2_to_shared_8x8_layout_fp64,
)

__all__ = ["get_ldmatrix_offset", "get_mma_micro_size", "get_swizzle_layout", "make_mma_swizzle_layout",
           "mma_store_index_map", "mma_store_index_map_fp64", "shared_16x16_to_mma_32x8_layout",
           "shared_16x32_to_mma_32x16_layout", "shared_32x16_to_mma_32x16_layout"]


def _bits(dtype: Any) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(str(dtype)))


def get_ldmatrix_offset(matrix: str, row_idx: Any, col_idx: Any, stride: Any, dtype: Any = "float16",
                        transposed: bool = False) -> tuple[Any, Any]:
    """The (row, col) offset, in elements, of the row lane `row_idx` gives ``ldmatrix.x4`` when it loads a 16 x 16
    (16-bit), 16 x 32 (8-bit) or 16 x 8 (32-bit) tile of operand `matrix` (``"A"`` / ``"B"``); `transposed` as
    the operand is stored (A: [K, M], B: [N, K])."""
    if matrix not in ("A", "B"):
        raise ValueError("matrix should be either A or B")
    bits = _bits(dtype)
    if bits == 16:
        fn = ldmatrix_trans_32x8_to_shared_16x16_layout if transposed else ldmatrix_32x8_to_shared_16x16_layout
        return fn(row_idx, col_idx)
    if bits == 32 or bits <= 8:
        if not ((matrix == "B" and transposed) or (matrix == "A" and not transposed)):
            raise ValueError(f"ldmatrix loads {bits}-bit operands only as A row-major or B transposed ([N, K])")
        if bits == 32:
            fn = ldmatrix_32x4_to_shared_16x8_layout_b if matrix == "B" else ldmatrix_32x4_to_shared_16x8_layout_a
            return fn(row_idx, col_idx)
        fn = ldmatrix_32x16_to_shared_16x32_layout_b if matrix == "B" else ldmatrix_32x16_to_shared_16x32_layout_a
        row, col = fn(row_idx, col_idx)
        return row, col * (8 // bits)
    raise ValueError(f"Unsupported dtype {dtype}")


def shared_16x16_to_mma_32x8_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 2)


def shared_16x32_to_mma_32x16_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 4)


def shared_32x16_to_mma_32x16_layout(i: Any, j: Any) -> tuple[Any, Any]:
    """A 32 x 16 tile whose 32 rows hold k (an int8 operand stored transposed)."""
    return (i % 16) // 4 + 4 * (j % 8), 8 * (j // 8) + 4 * (i // 16) + i % 4


def mma_store_index_map(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(row, col) in a warp's 16 x 16 accumulator tile of value `local_id` of lane `thread_id`."""
    return c_fragment(thread_id, local_id)


def mma_store_index_map_fp64(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """The m8n8 accumulator (two values per lane)."""
    return mma_store_32x2_to_shared_8x8_layout_fp64(thread_id, local_id)


def get_mma_micro_size(dtype: Any) -> tuple[int, int, int]:
    """``(x, y, k)`` of the MMA tile an emitter steps by: 16 x 16, k 16 (k 32 for 8-bit types)."""
    k = 32 if str(dtype) in ("float8_e4m3", "float8_e5m2", "int8", "float8_e4m3fn") else 16
    return 16, 16, k
