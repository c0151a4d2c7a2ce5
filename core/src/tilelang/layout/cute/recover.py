"""Recover CuTe layouts from `tilelang.layout.Layout` objects.

A TileLang layout is probed as its row-major linearized address ``A(x)`` on every coordinate of its (constant)
domain. `composed_layout_from_tilelang` finds an XOR swizzle by GF(2) bit incidence (each power-of-two bit
of an input index is toggled; a swizzled bit moves two address bits ``lo`` and ``lo + s`` where ``lo`` is
also some other bit's plain image), undoes it (a swizzle is an involution), reads the affine strides off
one-hot probes, and accepts the result only if ``Sw(offset + plain(x)) == A(x)`` holds on the whole domain
-- an exhaustive check, not a sample. Results are congruent to the TileLang input shape.
"""

from __future__ import annotations

from typing import Any

from tilelang.layout.cute import int_tuple as it
from tilelang.layout.cute.int_tuple import LayoutAlgebraError
from tilelang.layout.cute.layout import Layout, _coalesce_py, _py, make
from tilelang.layout.cute.swizzle import ComposedLayout, Swizzle


class _Probe:
    """``A(x)`` of a TileLang layout on its whole domain (None when the domain is too large to enumerate)."""

    def __init__(self, layout: Any):
        from tilelang.layout.indexing import const_int, enumerate_exprs

        shape = []
        for e in layout.get_input_shape():
            c = const_int(e)
            if c is None:
                raise LayoutAlgebraError(f"InputShape extent {e} of a shared tensor layout must be constant")
            shape.append(c)
        out_shape = []
        for e in layout.get_output_shape():
            c = const_int(e)
            if c is None:
                raise LayoutAlgebraError(f"OutputShape extent {e} of a shared tensor layout must be constant")
            out_shape.append(c)
        self.shape = shape
        self.address = None
        if not shape or 0 in shape:
            return
        values = enumerate_exprs(layout.index, layout.forward_vars, shape)
        if values is None:
            return
        stride, addr = 1, 0
        for v, extent in zip(reversed(values), reversed(out_shape)):
            addr = addr + v * stride
            stride *= extent
        self.address = addr

    def at(self, coord: list[int]) -> int:
        return int(self.address[tuple(coord)])  # type: ignore[index]


def _apply(sw: Swizzle, x: Any) -> Any:
    if sw.b_bits <= 0:
        return x
    mask = ((1 << sw.b_bits) - 1) << (sw.m_base + sw.s_shift)
    return x ^ ((x & mask) >> sw.s_shift)


def _recover_plain(probe: _Probe, sw: Swizzle, offset: int) -> tuple[Any, Any] | None:
    """The flat affine layout ``P`` with ``Sw(offset + P(x)) == A(x)`` everywhere, or None."""
    import numpy as np

    n = len(probe.shape)
    mode_sh: list[int] = []
    mode_st: list[int] = []
    for k, extent in enumerate(probe.shape):
        if extent <= 1:
            mode_sh.append(1)
            mode_st.append(0)
            continue
        rem, place = extent, 1
        while rem > 1:  # one mode per power-of-two digit, then the odd remainder
            ext = 2 if rem % 2 == 0 else rem
            coord = [0] * n
            coord[k] = place
            mode_sh.append(ext)
            mode_st.append(int(_apply(sw, probe.at(coord))) - offset)
            rem //= ext
            place *= ext
    sh, st = _coalesce_py(tuple(mode_sh), tuple(mode_st))
    # exhaustive check: evaluate the plain layout on the column-major linearization of every coordinate
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in probe.shape], indexing="ij")
    linear = np.zeros(grids[0].shape, dtype=np.int64)
    place = 1
    for g, s in zip(grids, probe.shape):
        linear += g * place
        place *= s
    q = np.full(linear.shape, offset, dtype=np.int64)
    rem = linear
    shapes, strides = it.leaves(sh), it.leaves(st)
    for i, (s, d) in enumerate(zip(shapes, strides)):
        last = i + 1 == len(shapes)
        q += (rem if last else rem % s) * d
        rem = rem // s
    if not np.array_equal(_apply(sw, q), probe.address):
        return None
    return sh, st


def _input_shape_tuple(shape: list[int]) -> Layout:
    from tilelang.layout.cute.layout import make_column_major_layout

    return make_column_major_layout(tuple(shape))


def layout_from_tilelang(layout: Any) -> Layout | None:
    """The plain affine layout equal to `layout` (no swizzle, zero offset), congruent to its input shape."""
    probe = _Probe(layout)
    if probe.address is None:
        return None
    plain = _recover_plain(probe, Swizzle(0, 0, 0), 0)
    if plain is None:
        return None
    return make(*plain).with_shape(tuple(probe.shape))


def composed_layout_from_tilelang(layout: Any) -> ComposedLayout | None:
    """``Sw o offset o plain`` equal to `layout` (see the module docstring), or None."""
    probe = _Probe(layout)
    if probe.address is None:
        return None
    n = len(probe.shape)
    a0 = probe.at([0] * n)
    cols: list[int] = []
    identity_bits = 0
    for k, extent in enumerate(probe.shape):
        low_bits = (extent & -extent).bit_length() - 1  # 2^p toggles cleanly for p below the extent's 2-adic order
        for p in range(low_bits):
            coord = [0] * n
            coord[k] = 1 << p
            col = probe.at(coord) ^ a0
            if col < 0:
                return None
            cols.append(col)
            if bin(col).count("1") == 1:
                identity_bits |= col
    targets: dict[int, int] = {}
    for col in cols:
        if bin(col).count("1") != 2:
            continue
        lo = (col & -col).bit_length() - 1
        hi = col.bit_length() - 1
        if not identity_bits >> lo & 1:
            continue  # two address bits from a plain non-power-of-two stride
        if lo in targets:
            return None
        targets[lo] = hi - lo
    sw = Swizzle(0, 0, 0)
    if targets:
        m_base = min(targets)
        s_shift = targets[m_base]
        b_bits = 0
        while targets.get(m_base + b_bits) == s_shift:
            b_bits += 1
        if s_shift < b_bits:
            return None
        sw = Swizzle(b_bits, m_base, s_shift)
    offset = int(sw.apply(a0))
    plain = _recover_plain(probe, sw, offset)
    if plain is None:
        return None
    return ComposedLayout(sw, offset, make(*plain).with_shape(tuple(probe.shape)))


def layout_from_tilelang_hierarchical(layout: Any) -> Layout | None:
    """Each output axis recovered as its own affine layout and rerouted onto ``E(axis)``; None when an axis is
    not affine or two axes are driven by one input digit (no CuTe layout represents that)."""
    from tilelang.layout.layout import Layout as TileLangLayout

    index = layout.index
    if not index:
        return None
    projected = []
    for e in index:
        axis = layout_from_tilelang(TileLangLayout._of(layout.get_input_shape(), [e]))
        if axis is None:
            return None
        projected.append(axis)
    rank = len(projected)
    scaled = list(projected)
    for i in range(1, rank):  # thread every axis's split points into the last one's profile ...
        scaled[i] = projected[i].with_shape(scaled[i - 1].shape)
    for i in range(rank - 1):  # ... then conform the others to it
        scaled[i] = projected[i].with_shape(scaled[rank - 1].shape)
    shape = scaled[rank - 1].shape
    if not all(it.tree_equal(s.shape, shape) for s in scaled):
        return None
    stride: Any = 0
    for i, lay in enumerate(scaled):
        _, st = _py(lay)
        stride = it.add(stride, it.transform_leaf(st, lambda leaf, i=i: leaf if it.is_zero(leaf)
                                                  else it.mul(leaf, it.ScaledBasis(1, (i,)))))
    if not it.congruent(shape, stride):
        return None
    return make(shape, stride)
