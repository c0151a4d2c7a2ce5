"""Shared-memory swizzles: XOR layouts that spread a tile's rows over memory banks.

A swizzle permutes elements inside 8-row groups in units of 16 bytes, so a column walk of the tile hits
different banks. It changes only performance, never results: the pipeline applies it to every access
(`tilelang.transform.apply_layouts`), and a permutation of storage reads back what was written.

Two families:

- `make_swizzled_layout` / `SwizzledLayout`: the XOR inside each row, storage shape unchanged (the layout the
  pipeline picks and the one an IR annotation of kind ``"swizzle"`` names).
- The reference's hardware swizzles `make_full_bank_swizzled_layout` (128 bytes), `..._half_...` (64 bytes),
  `..._quarter_...` (32 bytes): the TMA / GMMA shared-memory atoms, ``(r, c) -> (c // atom, r // 8, offset in
  the 8-row atom)``; `make_wgmma_swizzled_layout` / `make_tcgen05mma_swizzled_layout` pick the widest that fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.layout.buffers import buffer_info, dtype_bits, stride_and_continuous
from tilelang.layout.fragment import Fragment, make_fully_replicated_layout_fragment
from tilelang.layout.layout import Layout, PaddedLayout, register_layout_kind, tile_shape_and_dtype

__all__ = ["SwizzledLayout", "dtype_bytes", "get_swizzle_layout", "make_full_bank_swizzled_layout",
           "make_fully_replicated_layout_fragment", "make_gemm_fragment_8x8", "make_gemm_fragment_8x8_transposed",
           "make_half_bank_swizzled_layout", "make_linear_layout", "make_mma_swizzle_layout",
           "make_quarter_bank_swizzled_layout", "make_swizzled_layout", "make_tcgen05mma_swizzled_layout",
           "make_volta_swizzled_layout", "make_wgmma_swizzled_layout"]


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of `dtype` (at least 1)."""
    return max(1, dtype_bits(dtype) // 8)


def _period(cols: int, vec: int, swizzle_bytes: int) -> int:
    """Rows in one XOR period: the largest power of two <= ``swizzle_bytes / 16`` that divides the number of
    16-byte units of a row (so the XOR stays inside the row: a permutation)."""
    if cols % vec:
        return 1
    units = cols // vec
    period = 1
    while period * 2 <= min(swizzle_bytes // 16, units) and units % (period * 2) == 0:
        period *= 2
    return period


class SwizzledLayout(Layout):
    """``(r, c) -> (r, (c // vec ^ r % period) * vec + c % vec)`` over the last two dims (16-byte vectors)."""

    kind = "swizzle"

    def __init__(self, shape: Sequence[Any], dtype: str, swizzle_bytes: int = 128):
        if isinstance(swizzle_bytes, bool) or not isinstance(swizzle_bytes, int) or swizzle_bytes < 16:
            raise ValueError(f"swizzle_bytes must be an int >= 16, got {swizzle_bytes!r}")
        vec = max(1, 128 // dtype_bits(dtype))
        cols = getattr(shape[-1], "value", shape[-1]) if len(shape) >= 2 else 0
        period = _period(int(cols), vec, swizzle_bytes) if isinstance(cols, int) and cols > 0 else 1

        def forward(*idx: Any) -> list[Any]:
            if period == 1:
                return list(idx)
            *lead, r, c = idx
            return [*lead, r, ((c // vec) ^ (r % period)) * vec + c % vec]

        super().__init__(shape, forward, storage_shape=list(shape),
                         params={"dtype": str(dtype), "swizzle_bytes": swizzle_bytes})
        self.period = period


def make_swizzled_layout(buffer: Any, k_major: bool = True, allow_pad: bool = True, *, dtype: str | None = None,
                         swizzle_bytes: int = 128) -> Layout:
    """The bank-conflict-free layout of a shared tile: a buffer (or region / element of one), or a shape with
    ``dtype=``.

    The XOR covers up to `swizzle_bytes` of each row; it serves K-major and MN-major operands alike
    (`k_major` is accepted for the reference's signature). A row too narrow to swizzle (fewer than two
    16-byte units, or not a multiple of them) is padded by 16 bytes when `allow_pad`, else kept linear.
    """
    shape, dtype = tile_shape_and_dtype(buffer, dtype)
    if dtype is None:
        raise ValueError("make_swizzled_layout needs a dtype when given a shape")
    if not isinstance(k_major, bool) or not isinstance(allow_pad, bool):
        raise TypeError("make_swizzled_layout(buffer, k_major: bool, allow_pad: bool, *, dtype=, swizzle_bytes=): "
                        f"got k_major={k_major!r}, allow_pad={allow_pad!r}")
    layout = SwizzledLayout(shape, dtype, swizzle_bytes)
    if layout.period > 1 or len(shape) < 2 or not allow_pad:
        return layout
    from tilelang.layout.indexing import const_int

    rows = const_int(shape[-2])
    if rows is None or rows < 2:
        return layout
    return PaddedLayout(shape, max(1, 128 // dtype_bits(dtype)))


def _swizzle_from_ir(fields: dict[str, Any], shape: list[Any], dtype: str | None) -> Layout:
    dt = fields.get("dtype", dtype)
    if dt is None:
        raise ValueError("a swizzle layout needs a dtype")
    return SwizzledLayout(shape, str(dt), int(fields.get("swizzle_bytes", 128)))


register_layout_kind("swizzle", _swizzle_from_ir)


# ---------------------------------------------------------------------------------------------- bank swizzles
def _bank_swizzle(buffer: Any, units: int, what: str) -> Layout:
    """The shared-memory atom of `units` 16-byte vectors per row (8 = 128B, 4 = 64B, 2 = 32B): rows in groups of
    eight, the vector column XORed with the row bits that sit `units`..8 apart, atoms laid out column-major."""
    _, shape, dtype = buffer_info(buffer)  # type: ignore[misc]
    rows, cols = stride_and_continuous(shape, what)
    vec = max(1, 128 // dtype_bits(dtype))
    if rows % 8:
        raise ValueError(f"{what} needs a multiple of 8 rows, got {rows} (shape {shape})")
    if cols % (vec * units):
        raise ValueError(f"{what} needs rows of a multiple of {vec * units} {dtype} elements "
                         f"({16 * units} bytes), got {cols} (shape {shape})")
    shift = 8 // units  # rows sharing one XOR pattern

    def forward(i: Any, j: Any) -> list[Any]:
        s = i % 8
        chunk = j // vec
        swizzled = (chunk % units) ^ (s // shift) if units > 1 else chunk % units
        return [chunk // units, i // 8, j % vec + (swizzled + s * units) * vec]

    base = Layout([rows, cols], forward)
    return base.expand(list(shape[:-2])) if len(shape) > 2 else base


def make_full_bank_swizzled_layout(buffer: Any) -> Layout:
    """The 128-byte swizzle atom (TMA / GMMA ``SWIZZLE_128B``) over a shared tile's last two dims."""
    return _bank_swizzle(buffer, 8, "make_full_bank_swizzled_layout")


def make_half_bank_swizzled_layout(buffer: Any) -> Layout:
    """The 64-byte swizzle atom (``SWIZZLE_64B``) over a shared tile's last two dims."""
    return _bank_swizzle(buffer, 4, "make_half_bank_swizzled_layout")


def make_quarter_bank_swizzled_layout(buffer: Any) -> Layout:
    """The 32-byte swizzle atom (``SWIZZLE_32B``) over a shared tile's last two dims."""
    return _bank_swizzle(buffer, 2, "make_quarter_bank_swizzled_layout")


def make_linear_layout(buffer_or_load_or_region: Any) -> Layout:
    """Row-major storage of a tile of any rank: one flat output index."""
    from tilelang.layout.indexing import linearize

    _, shape, _ = buffer_info(buffer_or_load_or_region)  # type: ignore[misc]
    return Layout(shape, lambda *idx: linearize(list(idx), shape) if shape else 0)


def _widest_bank_swizzle(buffer: Any, continuity: int | None, what: str) -> Layout:
    """The widest bank swizzle whose atom divides `continuity` columns (default: the row), else linear."""
    _, shape, dtype = buffer_info(buffer)  # type: ignore[misc]
    rows, cols = stride_and_continuous(shape, what)
    width = cols if continuity is None or continuity < 0 else int(continuity)
    row_bits = width * dtype_bits(dtype)
    if rows % 8 == 0:
        for units, maker in ((8, make_full_bank_swizzled_layout), (4, make_half_bank_swizzled_layout),
                             (2, make_quarter_bank_swizzled_layout)):
            if row_bits % (128 * units) == 0 and cols * dtype_bits(dtype) % (128 * units) == 0:
                return maker(buffer)
    return make_linear_layout(buffer)


def make_wgmma_swizzled_layout(buffer: Any, continuity: int | None = None, k_major: bool = True) -> Layout:
    """The shared layout a Hopper GMMA operand reads: the widest bank swizzle whose atom divides `continuity`
    elements (default: the row). `k_major` is accepted for the reference's signature (the atom serves both)."""
    return _widest_bank_swizzle(buffer, continuity, "make_wgmma_swizzled_layout")


def make_tcgen05mma_swizzled_layout(buffer: Any, continuity: int | None = None, k_major: bool = True) -> Layout:
    """The shared layout a Blackwell UMMA operand reads (the same atoms as GMMA)."""
    return _widest_bank_swizzle(buffer, continuity, "make_tcgen05mma_swizzled_layout")


def _volta_crosswise(rows: int) -> Any:
    """K-inner operand (rows = M or N, 32 | rows and cols): 4-element vectors; vector column v is a panel of
    ``4 * rows`` elements, inside which row i's vector sits at ``16 (i // 16) + 4 (i % 4) + 2 bit2 + bit1`` with
    the two bits XORed from row and vector-column bits (so the eight lanes of a quad-pair's loads hit distinct
    banks)."""

    def forward(i: Any, j: Any) -> Any:
        v = j // 4
        w = v % 8
        bit2 = ((i % 32) // 16 + (i % 16) // 8 + w // 4) % 2
        bit1 = ((i % 8) // 4) ^ ((w % 4) // 2)
        return j % 4 + ((i // 16) * 16 + (i % 4) * 4 + bit2 * 2 + bit1) * 4 + v * rows * 4

    return forward


def _volta_congruous(cols: int, is_a: bool) -> Any:
    """MN-inner operand (4 | rows, 64 | cols): 8-element vectors in tiles of 4 rows x 8 vectors; a tile's vector
    column picks its row inside the tile (A: column // 2, B: column % 4) and is XORed with the source row."""

    def forward(i: Any, j: Any) -> Any:
        v = j // 8
        tile_col, in_col = v // 8, v % 8
        in_row = i % 4
        if is_a:
            row, col = in_col // 2, (in_col % 2) * 4 + (in_row ^ (in_col // 2))
        else:
            row, col = in_col % 4, (in_col // 4) * 4 + (in_row ^ (in_col % 4))
        return (row + (i // 4) * 4) * cols + j % 8 + (col + tile_col * 8) * 8

    return forward


def make_volta_swizzled_layout(buffer: Any, is_a: bool = True, k_inner: bool = True) -> Layout:
    """The shared layout Volta (sm_70) tensor-core operands are read from: a permutation of the tile's last two
    dims (K-inner "crosswise" tiles when both extents are multiples of 32; MN-inner "congruous" A / B tiles
    when rows are a multiple of 4 and columns of 64), else rows padded by 8 elements when a row is a multiple of
    16 elements, else row-major. `is_a` picks the A or B form, `k_inner` whether K is the contiguous dim."""
    _, shape, _ = buffer_info(buffer)  # type: ignore[misc]
    rows, cols = stride_and_continuous(shape, "make_volta_swizzled_layout")
    if not isinstance(is_a, bool) or not isinstance(k_inner, bool):
        raise TypeError(f"make_volta_swizzled_layout(buffer, is_a: bool, k_inner: bool): got is_a={is_a!r}, "
                        f"k_inner={k_inner!r}")
    if k_inner and rows % 32 == 0 and cols % 32 == 0:
        forward = _volta_crosswise(rows)
    elif cols % 64 == 0 and rows % 4 == 0:
        forward = _volta_congruous(cols, is_a)
    elif cols % 16 == 0:
        return PaddedLayout(shape, 8)
    else:
        return make_linear_layout(buffer)
    base = Layout([rows, cols], forward, storage_shape=[rows * cols])
    return base.expand(list(shape[:-2])) if len(shape) > 2 else base


def make_gemm_fragment_8x8() -> Fragment:
    """The 8x8 tile one ``ldmatrix`` / ``stmatrix`` moves per warp: row ``i`` on lanes ``4i..4i+3``, two
    consecutive elements per lane."""
    return Fragment([8, 8], forward_thread_fn=lambda i, j: i * 4 + j // 2, forward_index_fn=lambda i, j: j % 2)


def make_gemm_fragment_8x8_transposed() -> Fragment:
    """`make_gemm_fragment_8x8` of the transposed tile: column ``j`` on lanes ``4j..4j+3``."""
    return Fragment([8, 8], forward_thread_fn=lambda i, j: j * 4 + i // 2, forward_index_fn=lambda i, j: i % 2)


_ = make_fully_replicated_layout_fragment  # re-exported: the reference defines it in this module


def get_swizzle_layout(row_idx: Any, col_idx: Any, row_size: int, dtype: Any,
                       swizzle_bytes: int | None = None) -> tuple[Any, Any, Any]:
    """``(column tile, row, swizzled column)`` of element ``(row_idx, col_idx)`` of a shared tile with rows of
    `row_size` elements: the row's 16-byte vectors are grouped `swizzle_bytes` at a time (default: the row, at
    most 128 bytes), and the vector index in a group is XORed with the row's position in its 8-row period."""
    bits = dtype_bits(dtype)
    row_bytes = bits * int(row_size) // 8
    if row_bytes % 32:
        raise ValueError(f"get_swizzle_layout: rows must be a multiple of 32 bytes, got {row_bytes}")
    if swizzle_bytes is None:
        swizzle_bytes = min(128, row_bytes)
    per_vector = 128 // bits
    group = int(swizzle_bytes) // 16
    vector = col_idx // per_vector
    swizzled = ((vector % group) ^ ((row_idx % 8) // (8 // group))) * per_vector + col_idx % per_vector
    return vector // group, row_idx, swizzled


def make_mma_swizzle_layout(shared_buf: Any, is_smooth: bool = False) -> Layout:
    """The ldmatrix-friendly swizzle of a shared tile (`get_swizzle_layout` on its last two dims, column tiles
    first); the identity when `is_smooth` or when a row is not a multiple of 64 bytes."""
    _, shape, dtype = buffer_info(shared_buf)  # type: ignore[misc]
    from tilelang.layout.indexing import const_int

    cols = const_int(shape[-1])
    if is_smooth or cols is None or cols * dtype_bits(dtype) % 512:
        return Layout(shape, lambda *idx: list(idx))

    def forward(*idx: Any) -> list[Any]:
        *lead, i, j = idx
        return [*lead, *get_swizzle_layout(i, j, cols, dtype)]

    return Layout(shape, forward)
