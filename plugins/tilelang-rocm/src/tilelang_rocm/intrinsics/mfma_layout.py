"""Lane layouts of the CDNA MFMA operands and accumulators (wave64), as index functions.

``thread_id_shared_access_64xV_to_RxC_layout_X(thread_id, local_id) -> (row, col)``: the element of an R x C
operand tile that register `local_id` of lane `thread_id` holds; ``shared_RxC_to_local_64xV_layout_X(i, j) ->
(thread_id, local_id)``: the inverse. ``_A`` maps a tile whose rows are the lane-indexed dimension (A as M x K,
B stored N x K), ``_B`` one whose columns are (A stored K x M, B as K x N). The accumulator of a 16 x 16 MFMA
puts column ``lane % 16`` and rows ``4 * (lane // 16) + v`` in lane `lane` (``_C_m_n``; ``_C_n_m`` is that tile
transposed, the orientation the emitters store, since they issue ``B x A``).

`make_mfma_swizzle_layout` XORs 16-byte column groups with the row phase so the lanes of an MFMA operand load
hit different LDS banks.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "make_mfma_swizzle_layout",
    "shared_16x4_to_local_64x1_layout_A", "thread_id_shared_access_64x1_to_16x4_layout_A",
    "shared_4x16_to_local_64x1_layout_B", "thread_id_shared_access_64x1_to_4x16_layout_B",
    "shared_16x16_to_local_64x4_layout_C", "shared_16x16_to_ldmatrix_64x4_layout",
    "thread_id_shared_access_64x4_to_16x16_layout_A", "shared_16x16_to_local_64x4_layout_A",
    "thread_id_shared_access_64x4_to_16x16_layout_B", "shared_16x16_to_local_64x4_layout_B",
    "shared_16x16_to_local_64x4_layout_m_n", "shared_16x16_to_local_64x4_layout_n_k",
    "shared_16x16_to_local_64x4_layout_n_m", "shared_16x16_to_local_64x4_layout_k_n",
    "thread_id_shared_access_64x4_to_16x16_layout_C_m_n", "thread_id_shared_access_64x4_to_16x16_layout_C_n_m",
    "thread_id_shared_access_64x8_to_16x32_layout_A", "shared_16x32_to_local_64x8_layout_A",
    "thread_id_shared_access_64x8_to_16x32_layout_B", "shared_16x32_to_local_64x8_layout_B",
    "thread_id_shared_access_64x16_to_16x64_layout_A", "shared_16x64_to_local_64x16_layout_A",
    "thread_id_shared_access_64x16_to_16x64_layout_B", "shared_16x64_to_local_64x16_layout_B",
    "shared_32x32_to_local_64x16_layout_C", "thread_id_shared_access_64x16_to_32x32_layout_C_n_m",
    "thread_id_shared_access_64x16_to_32x32_layout_C_m_n", "shared_32x32_to_local_64x16_layout_A",
    "thread_id_shared_access_64x16_to_32x32_layout_A", "shared_32x32_to_local_64x16_layout_B",
    "thread_id_shared_access_64x16_to_32x32_layout_B",
]


def _zero() -> Any:
    from tvm import tirx

    return tirx.IntImm("int32", 0)


# ---------------------------------------------------------------- 16 x 4 (fp32 MFMA 16x16x4: one value a lane)
def shared_16x4_to_local_64x1_layout_A(i: Any, j: Any) -> tuple[Any, Any]:
    return i + 16 * j, _zero()


def thread_id_shared_access_64x1_to_16x4_layout_A(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, thread_id // 16


def shared_4x16_to_local_64x1_layout_B(i: Any, j: Any) -> tuple[Any, Any]:
    return 16 * i + j, _zero()


def thread_id_shared_access_64x1_to_4x16_layout_B(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id // 16, thread_id % 16


# ---------------------------------------------------------------- 16 x (4 V): V values a lane along the K side
def _lane_rows(v: int) -> tuple[Any, Any]:
    """(forward, inverse) maps of a 16 x 4v tile whose rows follow the lane (`_A` orientation)."""

    def forward(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
        return thread_id % 16, (thread_id // 16) * v + local_id

    def inverse(i: Any, j: Any) -> tuple[Any, Any]:
        return i + 16 * (j // v), j % v

    return forward, inverse


def _lane_cols(v: int) -> tuple[Any, Any]:
    """(forward, inverse) maps of a 4v x 16 tile whose columns follow the lane (`_B` orientation)."""

    def forward(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
        return (thread_id // 16) * v + local_id, thread_id % 16

    def inverse(i: Any, j: Any) -> tuple[Any, Any]:
        return j + 16 * (i // v), i % v

    return forward, inverse


thread_id_shared_access_64x4_to_16x16_layout_A, shared_16x16_to_local_64x4_layout_A = _lane_rows(4)
thread_id_shared_access_64x4_to_16x16_layout_B, shared_16x16_to_local_64x4_layout_B = _lane_cols(4)
thread_id_shared_access_64x8_to_16x32_layout_A, shared_16x32_to_local_64x8_layout_A = _lane_rows(8)
thread_id_shared_access_64x8_to_16x32_layout_B, shared_16x32_to_local_64x8_layout_B = _lane_cols(8)
thread_id_shared_access_64x16_to_16x64_layout_A, shared_16x64_to_local_64x16_layout_A = _lane_rows(16)
thread_id_shared_access_64x16_to_16x64_layout_B, _cols16_inverse = _lane_cols(16)


def shared_16x64_to_local_64x16_layout_B(i: Any, j: Any) -> tuple[Any, Any]:
    """The reference's map for a K-side-64 B tile read as 16 x 64 (the same form as the A map)."""
    return i + 16 * (j // 16), j % 16


shared_16x16_to_local_64x4_layout_m_n = shared_16x16_to_local_64x4_layout_A
shared_16x16_to_local_64x4_layout_n_k = shared_16x16_to_local_64x4_layout_A
shared_16x16_to_local_64x4_layout_n_m = shared_16x16_to_local_64x4_layout_B
shared_16x16_to_local_64x4_layout_k_n = shared_16x16_to_local_64x4_layout_B
for _f in (thread_id_shared_access_64x4_to_16x16_layout_A, shared_16x16_to_local_64x4_layout_A,
           thread_id_shared_access_64x4_to_16x16_layout_B, shared_16x16_to_local_64x4_layout_B,
           thread_id_shared_access_64x8_to_16x32_layout_A, shared_16x32_to_local_64x8_layout_A,
           thread_id_shared_access_64x8_to_16x32_layout_B, shared_16x32_to_local_64x8_layout_B,
           thread_id_shared_access_64x16_to_16x64_layout_A, shared_16x64_to_local_64x16_layout_A,
           thread_id_shared_access_64x16_to_16x64_layout_B):
    _f.__module__ = __name__
del _f


# ---------------------------------------------------------------- 16 x 16 accumulators
def shared_16x16_to_local_64x4_layout_C(i: Any, j: Any) -> tuple[Any, Any]:
    """Accumulator (row i, col j) -> (lane, register): rows in groups of four per 16 lanes."""
    return j + 16 * (i // 4), i % 4


def shared_16x16_to_ldmatrix_64x4_layout(ind: Any) -> Any:
    from tvm.runtime import convert

    thread_id, local_id = shared_16x16_to_local_64x4_layout_C(ind[0], ind[1])
    return convert([thread_id, local_id])


def thread_id_shared_access_64x4_to_16x16_layout_C_m_n(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return (thread_id // 16) * 4 + local_id, thread_id % 16


def thread_id_shared_access_64x4_to_16x16_layout_C_n_m(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, (thread_id // 16) * 4 + local_id


# ---------------------------------------------------------------- 32 x 32 (gfx950 int8 32x32x32)
def shared_32x32_to_local_64x16_layout_C(i: Any, j: Any) -> tuple[Any, Any]:
    """Accumulator (row i = M, col j = N) -> (lane, register) of ``v_mfma_i32_32x32x32_i8``: lane ``i + 32 h``
    holds the columns whose bit 2 is h, four at a time in groups eight apart."""
    half = (j // 4) % 2
    k = j - 4 * half
    return i + 32 * half, (k // 8) * 4 + k % 4


def thread_id_shared_access_64x16_to_32x32_layout_C_m_n(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 32, (thread_id // 32) * 4 + local_id % 4 + (local_id // 4) * 8


def thread_id_shared_access_64x16_to_32x32_layout_C_n_m(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 32, (thread_id // 32) * 4 + local_id % 4 + (local_id // 4) * 8


def shared_32x32_to_local_64x16_layout_A(i: Any, j: Any) -> tuple[Any, Any]:
    return i + 32 * (j // 16), j % 16


def thread_id_shared_access_64x16_to_32x32_layout_A(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 32, (thread_id // 32) * 16 + local_id


def shared_32x32_to_local_64x16_layout_B(i: Any, j: Any) -> tuple[Any, Any]:
    return j + 32 * (i // 16), i % 16


def thread_id_shared_access_64x16_to_32x32_layout_B(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return (thread_id // 32) * 16 + local_id, thread_id % 32


# ---------------------------------------------------------------- LDS swizzle
def make_mfma_swizzle_layout(shared_buf: Any, vecSize: int = 8) -> Any:
    """The XOR swizzle of `shared_buf` for MFMA operand reads: column group ``col // vecSize`` XOR the row's
    phase (``(row // per_phase) % max_phase``; 32 banks of 32 bits, 16-lane SIMD reads)."""
    from tilelang.backend.sdk import dtype_bits
    from tilelang.ir import region as R
    from tilelang.layout import Layout

    shape = list(R.buffer_shape(shared_buf))
    inner = int(shape[-1])
    bits = int(dtype_bits(str(R.buffer_dtype(shared_buf))))
    elems_per_bank_row = (32 * 32) // bits
    per_phase = max(1, elems_per_bank_row // inner)
    max_phase = max(1, min(16 // per_phase, inner // vecSize))

    def transform(*idx: Any) -> list[Any]:
        row, col = idx[-2], idx[-1]
        phase = (row // per_phase) % max_phase
        return [*idx[:-1], ((col // vecSize) ^ phase) * vecSize + col % vecSize]

    return Layout(shape, transform)
