"""Accumulator store maps and MFMA micro sizes (the reference's ``tilelang.rocm.intrinsics.utils``)."""

from __future__ import annotations

from typing import Any

from tilelang_rocm.intrinsics.mfma_layout import (
    make_mfma_swizzle_layout,
    thread_id_shared_access_64x4_to_16x16_layout_C_n_m,
    thread_id_shared_access_64x16_to_32x32_layout_C_m_n,
)

__all__ = ["get_mma_micro_size", "make_mfma_swizzle_layout", "mfma_store_index_map", "mfma_store_index_map_32x32"]


def mfma_store_index_map(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(lane, register) -> (row, col) of a 16 x 16 accumulator as the emitters store it."""
    return thread_id_shared_access_64x4_to_16x16_layout_C_n_m(thread_id, local_id)


def mfma_store_index_map_32x32(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(lane, register) -> (row, col) of a 32 x 32 accumulator."""
    return thread_id_shared_access_64x16_to_32x32_layout_C_m_n(thread_id, local_id)


def get_mma_micro_size(dtype: str) -> tuple[int, int, int]:
    """``(micro_x, micro_y, micro_k)`` of the MFMA tile for operand `dtype` (K 32 for 8-bit types)."""
    k = 32 if str(dtype) in ("float8_e4m3", "float8_e5m2", "int8") else 16
    return 16, 16, k
