"""Register fragments of ``mma.sync`` and the rows ``ldmatrix`` reads, as index maps (PTX ISA, "Matrix Fragments
for mma.m16n8k*").

A warp's operand tile is spread over its 32 lanes; lane ``l`` is in group ``l // 4`` ("groupID") at position
``l % 4`` ("threadID_in_group"). With ``e = 32 / bits`` elements per 32-bit register:

- A (16 x 8e, row-major): register ``r`` holds row ``groupID + 8 * (r % 2)``, columns
  ``e * threadID_in_group + 4e * (r // 2) + 0 .. e-1``;
- B (8e x 8, viewed as n x k): register ``r`` holds n = ``groupID``, k = ``e * threadID_in_group + 4e * r + ..``;
  the 16-wide n tiles here are two such atoms, the second's values following the first's;
- C (16 x 8, 32-bit): values ``c0 c1`` at row ``groupID``, ``c2 c3`` eight rows below, columns
  ``2 * threadID_in_group + 0, 1``; a 16 x 16 tile is two atoms side by side.

Functions named ``<shape>_to_mma_<...>(i, j)`` map a tile element to ``(lane, value index)``;
``mma_load_* / mma_store_* (lane, value)`` map back; ``ldmatrix_*(lane, i)`` give the shared element a lane's
row address (plus ``i``) reads with ``ldmatrix.x4`` (``_trans``: the ``.trans`` form's addresses).
"""

from __future__ import annotations

from typing import Any

from tilelang.layout import get_swizzle_layout, make_mma_swizzle_layout

__all__ = ["get_swizzle_layout", "make_mma_swizzle_layout"]  # extended below


def _export(fn: Any) -> Any:
    __all__.append(fn.__name__)
    return fn


# ------------------------------------------------------------------------------------------------ general maps
def a_fragment(lane: Any, value: Any, e: int) -> tuple[Any, Any]:
    """(row, col) of value `value` of `lane` in an A fragment of ``e`` elements per register."""
    r, within = value // e, value % e
    return lane // 4 + 8 * (r % 2), e * (lane % 4) + 4 * e * (r // 2) + within


def a_fragment_inverse(i: Any, j: Any, e: int) -> tuple[Any, Any]:
    return 4 * (i % 8) + (j % (4 * e)) // e, e * (2 * (j // (4 * e)) + i // 8) + j % e


def b_fragment(lane: Any, value: Any, e: int) -> tuple[Any, Any]:
    """(n, k) of value `value` of `lane` in a B fragment over two n8 atoms (the second atom's values follow)."""
    atom, v = value // (2 * e), value % (2 * e)
    r, within = v // e, v % e
    return 8 * atom + lane // 4, e * (lane % 4) + 4 * e * r + within


def b_fragment_inverse(n: Any, k: Any, e: int) -> tuple[Any, Any]:
    return 4 * (n % 8) + (k % (4 * e)) // e, 2 * e * (n // 8) + e * (k // (4 * e)) + k % e


def c_fragment(lane: Any, value: Any) -> tuple[Any, Any]:
    """(row, col) of value `value` of `lane` in a 16 x 16 accumulator tile (two m16n8 atoms)."""
    return 8 * ((value % 4) // 2) + lane // 4, 8 * (value // 4) + 2 * (lane % 4) + value % 2


# ------------------------------------------------------------------------------------------------ ldmatrix rows
@_export
def ldmatrix_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, 8 * (thread_id // 16) + local_id % 8


@_export
def ldmatrix_trans_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return 8 * (thread_id // 16) + thread_id % 8, 8 * ((thread_id % 16) // 8) + local_id % 8


@_export
def ldmatrix_32x4_to_shared_16x8_layout_a(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, 4 * (thread_id // 16) + local_id % 4


@_export
def ldmatrix_32x4_to_shared_16x8_layout_b(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return 8 * (thread_id // 16) + thread_id % 8, 4 * ((thread_id % 16) // 8) + local_id % 4


@_export
def ldmatrix_32x16_to_shared_16x32_layout_a(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, 16 * (thread_id // 16) + local_id


@_export
def ldmatrix_32x16_to_shared_16x32_layout_b(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return 8 * (thread_id // 16) + thread_id % 8, 16 * ((thread_id % 16) // 8) + local_id


# ------------------------------------------------------------------------------------------------ tile -> fragment
@_export
def shared_16x8_to_mma_a_32x4_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 1)


@_export
def shared_16x8_to_mma_a_32x4_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x8_to_mma_a_32x4_layout(j, i)


@_export
def shared_16x8_to_mma_b_32x4_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return b_fragment_inverse(i, j, 1)


@_export
def shared_16x8_to_mma_b_32x4_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x8_to_mma_b_32x4_layout(j, i)


@_export
def shared_16x16_to_mma_a_32x8_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 2)


@_export
def shared_16x16_to_mma_a_32x8_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x16_to_mma_a_32x8_layout(j, i)


@_export
def shared_16x16_to_mma_b_32x8_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return b_fragment_inverse(i, j, 2)


@_export
def shared_16x16_to_mma_b_32x8_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x16_to_mma_b_32x8_layout(j, i)


@_export
def shared_16x32_to_mma_a_32x16_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return a_fragment_inverse(i, j, 4)


@_export
def shared_32x16_to_mma_a_32x16_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x32_to_mma_a_32x16_layout(j, i)


@_export
def shared_16x32_to_mma_b_32x16_layout(i: Any, j: Any) -> tuple[Any, Any]:
    return b_fragment_inverse(i, j, 4)


@_export
def shared_32x16_to_mma_b_32x16_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x32_to_mma_b_32x16_layout(j, i)


for _short, _a, _b in (("16x8", "shared_16x8_to_mma_a_32x4_layout", "shared_16x8_to_mma_b_32x4_layout"),
                       ("16x16", "shared_16x16_to_mma_a_32x8_layout", "shared_16x16_to_mma_b_32x8_layout")):
    _regs = {"16x8": "32x4", "16x16": "32x8"}[_short]
    globals()[f"shared_{_short}_to_mma_{_regs}_layout_sr_a"] = globals()[_a]
    globals()[f"shared_{_short}_to_mma_{_regs}_layout_sr_b"] = globals()[_b]
    globals()[f"shared_{_short}_to_mma_{_regs}_layout_rs_a"] = globals()[_a + "_trans"]
    globals()[f"shared_{_short}_to_mma_{_regs}_layout_rs_b"] = globals()[_b + "_trans"]
    __all__ += [f"shared_{_short}_to_mma_{_regs}_layout_{k}" for k in ("sr_a", "sr_b", "rs_a", "rs_b")]
shared_16x32_to_mma_32x16_layout_sr_a = shared_16x32_to_mma_a_32x16_layout
shared_16x32_to_mma_32x16_layout_sr_b = shared_16x32_to_mma_b_32x16_layout
shared_16x32_to_mma_32x16_layout_rs_a = shared_32x16_to_mma_a_32x16_layout_trans
shared_16x32_to_mma_32x16_layout_rs_b = shared_32x16_to_mma_b_32x16_layout_trans
__all__ += [f"shared_16x32_to_mma_32x16_layout_{k}" for k in ("sr_a", "sr_b", "rs_a", "rs_b")]


# ------------------------------------------------------------------------------------------------ fragment -> tile
@_export
def mma_load_a_32x4_to_shared_16x8_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 1)


@_export
def mma_load_a_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 2)


@_export
def mma_load_a_32x16_to_shared_16x32_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return a_fragment(thread_id, local_id, 4)


@_export
def mma_load_b_32x4_to_shared_16x8_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return b_fragment(thread_id, local_id, 1)


@_export
def mma_load_b_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return b_fragment(thread_id, local_id, 2)


@_export
def mma_load_b_32x16_to_shared_16x32_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return b_fragment(thread_id, local_id, 4)


@_export
def mma_store_32x8_to_shared_16x16_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return c_fragment(thread_id, local_id)


mma_32x8_to_shared_16x16_layout = mma_store_32x8_to_shared_16x16_layout
__all__.append("mma_32x8_to_shared_16x16_layout")


@_export
def mma_store_32x2_to_shared_8x8_layout_fp64(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """The m8n8 accumulator (fp64, and the sm_75 integer m8n8k16 / m8n8k32): two values per lane."""
    return thread_id // 4, 2 * (thread_id % 4) + local_id


@_export
def mma_load_a_32x32_to_shared_16x64_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """The A fragment of a 4-bit m16n8k64 atom (8 values per register)."""
    return a_fragment(thread_id, local_id, 8)


@_export
def mma_load_b_32x16_to_shared_8x64_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """The B fragment (n x k) of one 4-bit n8k64 atom."""
    return b_fragment(thread_id, local_id, 8)


@_export
def shared_16x16_to_mma_32x8_smoothlayout(i: Any, j: Any) -> tuple[Any, Any]:
    """A "smooth" (lane-major) 16x16 tile: lane = i * 2 + j // 8, value = j % 8."""
    return i * 2 + j // 8, j % 8


@_export
def shared_16x32_to_mma_32x16_smoothlayout(i: Any, j: Any) -> tuple[Any, Any]:
    return i * 2 + j // 16, j % 16


@_export
def shared_32x16_to_mma_32x16_smoothlayout(i: Any, j: Any) -> tuple[Any, Any]:
    return i * 2 + j // 16, j % 16


# ------------------------------------------------------------------------------------------------ 4-bit (k64)
@_export
def shared_16x64_to_mma_a_32x32_layout(i: Any, j: Any) -> tuple[Any, Any]:
    """The A fragment of a 4-bit m16n8k64 atom (row-major 16 x 64 tile)."""
    return a_fragment_inverse(i, j, 8)


@_export
def shared_64x16_to_mma_a_32x32_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_16x64_to_mma_a_32x32_layout(j, i)


@_export
def shared_8x64_to_mma_b_32x16_layout(i: Any, j: Any) -> tuple[Any, Any]:
    """The B fragment (n x k) of one 4-bit n8k64 atom."""
    return b_fragment_inverse(i, j, 8)


@_export
def shared_64x8_to_mma_b_32x16_layout_trans(i: Any, j: Any) -> tuple[Any, Any]:
    return shared_8x64_to_mma_b_32x16_layout(j, i)


shared_16x64_to_mma_32x32_layout_sr_a = shared_16x64_to_mma_a_32x32_layout
shared_16x64_to_mma_32x32_layout_rs_a = shared_64x16_to_mma_a_32x32_layout_trans
shared_8x64_to_mma_32x16_layout_sr_b = shared_8x64_to_mma_b_32x16_layout
shared_8x64_to_mma_32x16_layout_rs_b = shared_64x8_to_mma_b_32x16_layout_trans
__all__ += ["shared_16x64_to_mma_32x32_layout_sr_a", "shared_16x64_to_mma_32x32_layout_rs_a",
            "shared_8x64_to_mma_32x16_layout_sr_b", "shared_8x64_to_mma_32x16_layout_rs_b"]


@_export
def ldmatrix_32x32_to_shared_16x64_layout_a(thread_id: Any) -> tuple[Any, Any]:
    """Row address of `thread_id` for an ``ldmatrix.x4`` of a 4-bit 16 x 64 A tile."""
    return thread_id % 16, 32 * (thread_id // 16)


@_export
def ldmatrix_32x32_to_shared_16x64_layout_b(thread_id: Any) -> tuple[Any, Any]:
    """Row address for an ``ldmatrix.x4`` of a 4-bit 16 x 64 (n x k) B tile."""
    return 8 * (thread_id // 16) + thread_id % 8, 32 * ((thread_id % 16) // 8)


@_export
def ldmatrix_32x16_to_shared_8x64_layout_b(thread_id: Any) -> tuple[Any, Any]:
    """Row address for an ``ldmatrix.x2`` of a 4-bit 8 x 64 (n x k) B tile."""
    return thread_id % 8, 32 * ((thread_id // 8) % 2)


# ------------------------------------------------------------------------------------------------ Metal
@_export
def metal_ct_store_32x16_to_16x32_layout(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    """(row, col) of value `local_id` of lane `thread_id` in a Metal cooperative-tensor 16 x 32 accumulator
    (two 16 x 16 simdgroup fragments of 8 values per lane)."""
    lane = thread_id % 32
    quad = lane >> 2
    base_row = (quad & 4) | ((lane >> 1) & 3)
    base_col = ((quad & 2) | (lane & 1)) * 4
    frag, v = local_id // 8, local_id % 8
    return base_row + (v // 4) * 8, base_col + frag * 16 + v % 4


@_export
def metal_ct_store_index_map() -> Any:
    from tvm.tirx import IndexMap

    return IndexMap.from_func(metal_ct_store_32x16_to_16x32_layout, index_dtype="int32")
