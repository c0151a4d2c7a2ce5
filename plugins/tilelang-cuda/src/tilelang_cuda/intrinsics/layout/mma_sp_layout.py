"""Fragments of the 2:4 sparse ``mma.sp`` operands (PTX ISA "Sparse matrix fragments"): A holds only the kept
half of each group of four along K, so its fragment is the dense one of half the K extent; B is dense.

``T.gemm_sp`` itself lowers through `tilelang_cuda.tileops.gemm_sp` (ldmatrix fragments of the compressed tile);
these maps describe the layouts for tools and tests.
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.layout.mma_layout import a_fragment, a_fragment_inverse

__all__ = ["shared_16x16_to_mma_sp_layout_sr_a", "shared_16x16_to_mma_sp_layout_sr_b",
           "shared_16x32_to_mma_sp_layout_sr_a", "shared_16x32_to_mma_sp_layout_sr_b",
           "shared_16x64_to_mma_sp_layout_sr_a", "shared_16x64_to_mma_sp_layout_sr_b",
           "mma_sp_load_a_32x4_to_shared_16x16_layout", "mma_sp_load_a_32x8_to_shared_16x32_layout",
           "mma_sp_load_a_32x16_to_shared_16x64_layout", "mma_sp_load_b_32x8_to_shared_16x16_layout",
           "mma_sp_load_b_32x16_to_shared_16x32_layout", "mma_sp_load_b_32x32_to_shared_16x64_layout"]


def _b_inverse(i: Any, j: Any, e: int) -> tuple[Any, Any]:
    """(lane, value) of B[n = i, k = j] when each lane holds ``e`` consecutive k per register over a k extent of
    16e (two 8e halves), n in 8-row atoms."""
    return 4 * (i % 8) + (j % (4 * e)) // e, 4 * e * (i // 8) + e * (j // (4 * e)) + j % e


def shared_16x16_to_mma_sp_layout_sr_a(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 1)


def shared_16x16_to_mma_sp_layout_sr_b(i: Any, j: Any) -> tuple[Any, Any]:
    return _b_inverse(i, j, 1)


def shared_16x32_to_mma_sp_layout_sr_a(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 2)


def shared_16x32_to_mma_sp_layout_sr_b(i: Any, j: Any) -> tuple[Any, Any]:
    return _b_inverse(i, j, 2)


def shared_16x64_to_mma_sp_layout_sr_a(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 4)


def shared_16x64_to_mma_sp_layout_sr_b(i: Any, j: Any) -> tuple[Any, Any]:
    return _b_inverse(i, j, 4)


def mma_sp_load_a_32x4_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 1)


def mma_sp_load_a_32x8_to_shared_16x32_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 2)


def mma_sp_load_a_32x16_to_shared_16x64_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 4)


def _b_forward(thread_id: Any, local_id: Any, e: int) -> tuple[Any, Any]:
    half = 4 * e
    row = thread_id // 4 + 8 * (local_id // half)
    return row, e * (thread_id % 4) + local_id % e + 4 * e * ((local_id % half) // e)


def mma_sp_load_b_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return _b_forward(thread_id, local_id, 1)


def mma_sp_load_b_32x16_to_shared_16x32_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return _b_forward(thread_id, local_id, 2)


def mma_sp_load_b_32x32_to_shared_16x64_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return _b_forward(thread_id, local_id, 4)
