"""Fragments of Volta's ``mma.sync.m8n8k4`` (sm_70), as used in 16 x 16 x 4 tiles: four quad-pairs of lanes each
compute an 8 x 8 block. Facts of the PTX ISA's m8n8k4 fragment tables (fp16 A/B, fp16 or fp32 C)."""

from __future__ import annotations

from typing import Any

__all__ = ["shared_16x4_to_mma_a_32x4_layout", "shared_4x16_to_mma_b_32x4_layout",
           "shared_16x4_to_mma_b_32x4_layout_trans", "mma_32x8_to_shared_16x16_layout_fp32",
           "mma_32x8_to_shared_16x16_layout_fp16", "mma_load_a_32x4_to_shared_16x4_layout",
           "mma_load_b_32x4_to_shared_16x4_layout_trans", "mma_load_b_32x4_to_shared_4x16_layout",
           "shared_16x16_to_mma_32x8_layout_fp32", "shared_16x16_to_mma_32x8_layout_fp16"]


def shared_16x4_to_mma_a_32x4_layout(row: Any, col: Any, rep: Any) -> tuple[Any, Any]:
    """(lane, value) of A[row, col] (16 x 4); `rep` picks the replica of the quad-pair layout."""
    lane = row % 4 + 4 * (row // 8) + 8 * rep + 16 * ((row // 4) % 2)
    return lane, col


def shared_4x16_to_mma_b_32x4_layout(row: Any, col: Any, rep: Any) -> tuple[Any, Any]:
    """(lane, value) of B[row, col] (4 x 16, k x n)."""
    return row + 4 * rep + 8 * col // 4, col % 4


def shared_16x4_to_mma_b_32x4_layout_trans(row: Any, col: Any, rep: Any) -> tuple[Any, Any]:
    """(lane, value) of B stored transposed ([n, k], 16 x 4)."""
    lane = row % 4 + 4 * rep + 8 * ((row % 8) // 4) + 16 * (row // 8)
    return lane, col


def mma_32x8_to_shared_16x16_layout_fp32(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(row, col) of value `local_id` of lane `thread_id` in the 16 x 16 fp32 accumulator."""
    row = thread_id % 2 + 2 * ((local_id // 2) % 2) + 4 * (thread_id // 16) + 8 * (((thread_id % 16) // 4) % 2)
    col = 2 * ((thread_id % 4) // 2) + 4 * ((thread_id % 16) // 8) + local_id % 2 + 8 * (local_id // 4)
    return row, col


def mma_32x8_to_shared_16x16_layout_fp16(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(row, col) of value `local_id` of lane `thread_id` in the 16 x 16 fp16 accumulator."""
    row = thread_id % 4 + 4 * (thread_id // 16) + 8 * ((thread_id % 8) // 4)
    col = local_id % 4 + 4 * ((thread_id % 16) // 8) + 8 * (local_id // 4)
    return row, col


def mma_load_a_32x4_to_shared_16x4_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 4 + 4 * ((thread_id // 16 + 2 * ((thread_id % 16) // 4)) % 4), local_id


def mma_load_b_32x4_to_shared_16x4_layout_trans(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 4 + 4 * ((thread_id // 8) % 2) + 8 * (thread_id // 16), local_id


def mma_load_b_32x4_to_shared_4x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 4, local_id + 4 * (thread_id // 8)


def shared_16x16_to_mma_32x8_layout_fp32(row: Any, col: Any) -> tuple[Any, Any]:
    """(lane, value) holding element (row, col) of the 16 x 16 fp32 accumulator (inverse of
    `mma_32x8_to_shared_16x16_layout_fp32`)."""
    lane = row % 2 + 2 * ((col // 2) % 2) + 4 * (row // 8) + 8 * ((col // 4) % 2) + 16 * ((row // 4) % 2)
    return lane, col % 2 + 2 * ((row // 2) % 2) + 4 * (col // 8)


def shared_16x16_to_mma_32x8_layout_fp16(row: Any, col: Any) -> tuple[Any, Any]:
    """(lane, value) holding element (row, col) of the 16 x 16 fp16 accumulator (inverse of
    `mma_32x8_to_shared_16x16_layout_fp16`)."""
    lane = row % 4 + 4 * (row // 8) + 8 * ((col // 4) % 2) + 16 * ((row // 4) % 2)
    return lane, col % 4 + 4 * (col // 8)
