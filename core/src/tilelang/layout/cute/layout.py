"""CuTe layouts (``shape:stride`` over integer tuples) and their algebra.

A layout maps a coordinate -- a linear index (mode 0 fastest) or a coordinate tuple congruent to its shape --
to ``sum(coord_k * stride_k)``; with `ScaledBasis` strides the result is a coordinate tuple. The functions
here follow CuTe's definitions (``cute/layout.hpp``): `coalesce`, `composition`, `complement`,
`right_inverse` / `left_inverse`, `logical_divide`, `logical_product` and its tiled / blocked forms. Shapes
must be static where CuTe requires it; strides may be dynamic (PrimExpr) or scaled bases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm_ffi import Object
from tvm_ffi.dataclasses import py_class

from tilelang.layout.cute import int_tuple as it
from tilelang.layout.cute.int_tuple import (
    IntTuple,
    PyIntTuple,
    check,
    from_python,
    is_basis,
    is_int,
    is_tuple,
    is_zero,
    python_form,
    to_python,
)

_INF = 1 << 62


@py_class("tl.cute.Layout", structural_eq="tree", repr=False)
class Layout(Object):
    """A CuTe layout: congruent `shape` and `stride` integer tuples (see the module docstring)."""

    shape_tree: IntTuple
    stride_tree: IntTuple

    @property
    def shape(self) -> PyIntTuple:
        return to_python(self.shape_tree)

    @property
    def stride(self) -> PyIntTuple:
        return to_python(self.stride_tree)

    def __getitem__(self, idx: int) -> Layout:
        sh, st = _py(self)
        return make(it.get(sh, int(idx)), it.get(st, int(idx)))

    def __call__(self, coord: Any) -> PyIntTuple:
        sh, st = _py(self)
        return crd2idx(python_form(coord), sh, st)

    def with_shape(self, shape: Any) -> Layout:
        """The same function over `shape` (its column-major linearization): ``composition(self, col_major)``."""
        return composition(self, make_column_major_layout(shape))

    @staticmethod
    def parse(text: str) -> Layout:
        """Invert ``str()``: ``"shape:stride"``."""
        text = str(text)
        check(":" in text, f"layout text must be 'shape:stride', got {text!r}")
        shape, stride = text.split(":", 1)
        return make(it.parse(shape), it.parse(stride))

    @staticmethod
    def from_tilelang(layout: Any) -> Layout | None:
        """The plain affine CuTe layout equal to a `tilelang.layout.Layout` (None when it is not affine)."""
        from tilelang.layout.cute.recover import layout_from_tilelang

        return layout_from_tilelang(layout)

    @staticmethod
    def from_tilelang_hierarchical(layout: Any) -> Layout | None:
        """Each output axis of a `tilelang.layout.Layout` recovered onto its own basis ``E(i)`` (None when an axis
        is not affine or two axes depend on one input digit)."""
        from tilelang.layout.cute.recover import layout_from_tilelang_hierarchical

        return layout_from_tilelang_hierarchical(layout)

    def to_tilelang(self) -> Any:
        """This layout as a `tilelang.layout.Layout` over its top-level modes."""
        from tilelang.layout.layout import Layout as TileLangLayout

        shape = [size(self[i]) for i in range(rank(self))]

        def forward(*coords: Any) -> list[Any]:
            result = self(tuple(coords))
            return list(it.leaves(result)) if isinstance(result, tuple) else [result]

        return TileLangLayout(shape, forward)

    def __str__(self) -> str:
        sh, st = _py(self)
        return f"{it.fmt(sh)}:{it.fmt(st)}"

    def __repr__(self) -> str:
        return str(self)


def make(shape: PyIntTuple, stride: PyIntTuple) -> Layout:
    """A `Layout` from Python-form shape and stride (checked congruent)."""
    check(it.congruent(shape, stride), f"Layout shape and stride must be congruent: {it.fmt(shape)} vs "
                                       f"{it.fmt(stride)}")
    return Layout(from_python(shape), from_python(stride))


def _py(layout: Layout) -> tuple[PyIntTuple, PyIntTuple]:
    if not isinstance(layout, Layout):
        raise TypeError(f"expected a cute.Layout, got {type(layout).__name__}: {layout!r}")
    return to_python(layout.shape_tree), to_python(layout.stride_tree)


# ---------------------------------------------------------------------------------------------- evaluation
def crd2idx(coord: PyIntTuple, shape: PyIntTuple, stride: PyIntTuple) -> PyIntTuple:
    """The codomain value of `coord`: a tuple coordinate goes mode by mode; a scalar one is split over the
    modes (mode 0 fastest; the last mode takes the rest, so the layout extends linearly past its domain)."""
    if is_tuple(coord):
        check(is_tuple(shape) and len(shape) == len(coord), f"coordinate {it.fmt(coord)} does not match shape "
                                                            f"{it.fmt(shape)}")
        acc: PyIntTuple = 0
        for c, s, d in zip(coord, shape, stride):
            acc = it.add(acc, crd2idx(c, s, d))
        return acc
    if is_tuple(shape):
        acc = 0
        rem = coord
        for i, (s, d) in enumerate(zip(shape, stride)):
            last = i + 1 == len(shape)
            size_i = it.product(s)
            acc = it.add(acc, crd2idx(rem if last else it.mod_leaf(rem, size_i), s, d))
            if not last:
                rem = it.div_leaf(rem, size_i)
        return acc
    return it.mul(coord, stride)


# ---------------------------------------------------------------------------------------------- basics
def rank(layout: Layout) -> int:
    return it.rank(_py(layout)[0])


def size(layout: Any) -> PyIntTuple:
    from tilelang.layout.cute.swizzle import ComposedLayout

    if isinstance(layout, ComposedLayout):
        layout = layout.layout
    return it.product(_py(layout)[0])


def flatten(layout: Layout) -> Layout:
    sh, st = _py(layout)
    return make(it.flatten(sh), it.flatten(st))


def _bw_coalesce(shapes: list[Any], strides: list[Any], front_sh: Any, front_st: Any, max_extent: int) -> tuple:
    """Fold the flat modes slowest-first into runs (CuTe bw_coalesce); the caller seeds the front mode."""
    out_sh: list[Any] = []
    out_st: list[Any] = []
    for s, d in zip(reversed(shapes[:-1]), reversed(strides[:-1])):
        if is_int(s) and s == 1:
            continue
        if is_int(front_sh) and front_sh == 1:
            front_sh, front_st = s, d
            continue
        if is_int(s) and is_int(front_sh) and it.leaf_equal(it.mul(s, d), front_st) and s * front_sh <= max_extent:
            front_sh, front_st = s * front_sh, d
        else:
            out_sh.insert(0, front_sh)
            out_st.insert(0, front_st)
            front_sh, front_st = s, d
    out_sh.insert(0, front_sh)
    out_st.insert(0, front_st)
    if len(out_sh) == 1:
        if is_int(out_sh[0]) and out_sh[0] == 1:
            return 1, 0
        return out_sh[0], out_st[0]
    return tuple(out_sh), tuple(out_st)


def _coalesce_py(shape: PyIntTuple, stride: PyIntTuple, max_extent: int = _INF) -> tuple:
    fsh, fst = list(it.leaves(shape)), list(it.leaves(stride))
    return _bw_coalesce(fsh, fst, fsh[-1], fst[-1], max_extent)


def coalesce(layout: Layout, max_extent: int | None = None) -> Layout:
    """The same function with contiguous modes fused (flat; a fully trivial layout becomes ``1:0``); runs stay
    within `max_extent` when given."""
    sh, st = _py(layout)
    return make(*_coalesce_py(sh, st, _INF if max_extent is None else int(max_extent)))


def _coalesce_x(shape: PyIntTuple, stride: PyIntTuple) -> tuple:
    """`coalesce` that keeps a trailing size-1 mode's stride (it matters past the domain)."""
    fsh, fst = list(it.leaves(shape)), list(it.leaves(stride))
    seed = 2 if is_int(fsh[-1]) and fsh[-1] == 1 else fsh[-1]
    return _bw_coalesce(fsh, fst, seed, fst[-1], _INF)


def _coprofile(stride: PyIntTuple) -> PyIntTuple:
    """The codomain structure of a layout: a leaf for plain strides, else a tree of the basis paths."""
    paths = [leaf.mode if is_basis(leaf) else () for leaf in it.leaves(stride)]
    if not any(is_basis(leaf) for leaf in it.leaves(stride)):
        return 0

    def build(ps: list[tuple[int, ...]]) -> PyIntTuple:
        heads = [p[0] for p in ps if p]
        if not heads:
            return 0
        return tuple(build([p[1:] for p in ps if p and p[0] == j]) if any(p and p[0] == j for p in ps) else 0
                     for j in range(max(heads) + 1))

    return build(paths)


def _coalesce_profile(shape: PyIntTuple, stride: PyIntTuple, profile: PyIntTuple) -> tuple:
    if not is_tuple(profile):
        return _coalesce_x(shape, stride)
    n = it.rank(shape)
    out_sh, out_st = [], []
    for i in range(n):
        if i < len(profile):
            s, d = _coalesce_profile(it.get(shape, i), it.get(stride, i), profile[i])
        else:
            s, d = it.get(shape, i), it.get(stride, i)
        out_sh.append(s)
        out_st.append(d)
    return tuple(out_sh), tuple(out_st)


def _unwrap(t: PyIntTuple) -> PyIntTuple:
    while is_tuple(t) and len(t) == 1:
        t = t[0]
    return t


def _compose(lhs_sh: PyIntTuple, lhs_st: PyIntTuple, rhs_sh: PyIntTuple, rhs_st: PyIntTuple) -> tuple:
    """One rhs (sub)mode through the lhs: the layout r with r(c) == lhs(rhs(c)), congruent to the rhs."""
    if is_tuple(rhs_sh):
        parts = [_compose(lhs_sh, lhs_st, s, d) for s, d in zip(rhs_sh, rhs_st)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    if is_basis(rhs_st):  # the rhs addresses one lhs mode by its path
        return _compose(it.basis_get(rhs_st.mode, lhs_sh), it.basis_get(rhs_st.mode, lhs_st), rhs_sh,
                        rhs_st.value)
    if is_zero(rhs_st):
        return rhs_sh, rhs_st
    if not is_tuple(lhs_sh):
        return rhs_sh, it.mul(rhs_st, lhs_st)
    check(is_int(rhs_st), f"composition needs a static rhs stride, got {it.fmt(rhs_st)}")
    check(is_int(rhs_sh), f"composition needs a static rhs shape, got {it.fmt(rhs_sh)}")
    res_sh: list[Any] = []
    res_st: list[Any] = []
    rest_shape, rest_stride = rhs_sh, rhs_st
    for cs, cd in zip(lhs_sh[:-1], lhs_st[:-1]):
        check(is_int(cs), f"composition needs static lhs shapes, got {it.fmt(lhs_sh)}")
        check(rest_stride % cs == 0 or abs(rest_stride) < cs,
              f"Composition stride divisibility: rest_stride={rest_stride}, curr_shape={cs}")
        a = abs(rest_stride)
        sign = (rest_stride > 0) - (rest_stride < 0)
        next_shape = -(-cs // a)
        next_stride = -(-a // cs) * sign
        if next_shape == 1 or rest_shape == 1:
            rest_stride = next_stride
            continue
        new_shape = min(next_shape, rest_shape)
        check(rest_shape % new_shape == 0,
              f"Composition shape divisibility: rest_shape={rest_shape}, new_shape={new_shape}")
        res_sh.append(new_shape)
        res_st.append(it.mul(rest_stride, cd))
        rest_shape //= new_shape
        rest_stride = next_stride
    last = lhs_st[-1]
    if not res_sh:
        return rest_shape, it.mul(rest_stride, last)
    if rest_shape == 1:
        return _unwrap(tuple(res_sh)), _unwrap(tuple(res_st))
    return tuple([*res_sh, rest_shape]), tuple([*res_st, it.mul(rest_stride, last)])


def composition(lhs: Layout, rhs: Layout) -> Layout:
    """``lhs o rhs``: ``result(c) == lhs(rhs(c))``, shaped like `rhs`."""
    lsh, lst = _py(lhs)
    rsh, rst = _py(rhs)
    csh, cst = _coalesce_profile(lsh, lst, _coprofile(rst))
    return make(*_compose(csh, cst, rsh, rst))


def _static_modes(shape: PyIntTuple, stride: PyIntTuple, what: str) -> list[tuple[int, int]]:
    out = []
    for s, d in zip(it.leaves(shape), it.leaves(stride)):
        check(is_int(s) and is_int(d), f"{what} requires static shapes and strides, got {it.fmt(shape)}:"
                                       f"{it.fmt(stride)}")
        out.append((s, d))
    return out


def right_inverse(layout: Layout) -> Layout:
    """A layout ``r`` with ``layout(r(i)) == i`` on the largest contiguous prefix the layout reaches."""
    sh, st = _coalesce_py(*_py(layout))
    shapes, strides = list(it.leaves(sh)), list(it.leaves(st))
    prefix, acc = [], 1
    for s in shapes:
        check(is_int(s), f"right_inverse requires static shapes, got {it.fmt(sh)}")
        prefix.append(acc)
        acc *= s
    order = sorted((k for k in range(len(shapes)) if is_int(strides[k])), key=lambda k: strides[k])
    out_sh, out_st, current = [], [], 1
    for k in order:
        check(strides[k] >= 0, f"right_inverse requires non-negative strides, got {strides[k]}")
        if strides[k] == current:
            out_sh.append(shapes[k])
            out_st.append(prefix[k])
            current = shapes[k] * strides[k]
    if not out_sh:
        return make(1, 0)
    return make(*_coalesce_py(tuple(out_sh), tuple(out_st)))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``l`` with ``l(layout(i)) == i`` for an injective layout."""
    sh, st = _coalesce_py(*_py(layout))
    modes = _static_modes(sh, st, "left_inverse")
    prefix, acc = [], 1
    for s, _ in modes:
        prefix.append(acc)
        acc *= s
    order = sorted(range(len(modes)), key=lambda k: modes[k][1])
    out_sh: list[int] = []
    out_st: list[int] = [0]
    covered = 1
    for k in order:
        d = modes[k][1]
        if d == 0:
            continue
        check(d % covered == 0, f"left_inverse divisibility: stride {d} is not a multiple of {covered}")
        out_sh.append(d // covered)
        out_st.append(prefix[k])
        covered = d
    out_sh.append(modes[order[-1]][0])
    return make(*_coalesce_py(tuple(out_sh), tuple(out_st)))


def filter(layout: Layout) -> Layout:
    """`coalesce` after turning every stride-0 mode into a size-1 one."""
    sh, st = _py(layout)
    fsh = tuple(1 if is_zero(d) else s for s, d in zip(it.leaves(sh), it.leaves(st)))
    return make(*_coalesce_py(fsh, tuple(it.leaves(st))))


def coshape(layout: Layout) -> PyIntTuple:
    """``1 + sum((shape_k - 1) * |stride_k|)``, per codomain axis for basis strides."""
    sh, st = _py(layout)
    co: PyIntTuple = 0
    for s, d in zip(it.leaves(sh), it.leaves(st)):
        co = it.add(co, it.mul(it.add_leaf(s, -1), it.abs_leaf(d)))
    return it.transform_leaf(co, lambda c: it.add_leaf(c, 1))


def cosize(layout: Layout) -> PyIntTuple:
    return it.product(coshape(layout))


def complement(layout: Layout, cotarget: int | None = None) -> Layout:
    """The layout of the codomain positions below `cotarget` that `layout` does not reach, ordered by stride
    (CuTe ``complement``); dynamic strides only for a rank-1 layout."""
    if cotarget is None:
        cs = cosize(filter(layout))
        check(is_int(cs), f"complement without a cotarget needs a static cosize, got {cs}")
        cotarget = cs
    cotarget = int(cotarget)
    fsh, fst = _py(filter(layout))
    modes = [(s, d) for s, d in zip(it.leaves(fsh), it.leaves(fst)) if not (is_int(s) and s == 1 and is_zero(d))]
    if all(is_int(s) and is_int(d) for s, d in modes):
        return _complement_static(modes, cotarget)
    check(len(modes) == 1, f"Dynamic-stride complement only for rank-1 layouts (as CuTe); got rank {len(modes)}")
    (s, d), = modes
    check(not is_basis(d), f"complement requires a scalar stride, got {d}")
    ds = it.mul_leaf(d, s)
    return make(*_coalesce_py((d, it.ceil_div_leaf(cotarget, ds)), (1, ds)))


def _complement_static(modes: list[tuple[int, int]], cotarget: int) -> Layout:
    if not modes:
        return make(*_coalesce_py((cotarget,), (1,)))
    rest = list(modes)
    out_sh, out_st = [], []
    run = 1
    while len(rest) > 1:
        k = min(range(len(rest)), key=lambda i: rest[i][1])
        s, d = rest.pop(k)
        check(d // run != 0, "Non-injective layout detected in complement")
        out_sh.append(d // run)
        out_st.append(run)
        run = d * s
    s, d = rest[0]
    check(d // run != 0, "Non-injective layout detected in complement")
    out_sh += [d // run, -(-cotarget // (d * s))]
    out_st += [run, d * s]
    return make(*_coalesce_py(tuple(out_sh), tuple(out_st)))


def make_layout_concat(layouts: Sequence[Layout]) -> Layout:
    """The layout whose modes are `layouts`."""
    parts = [_py(layout) for layout in layouts]
    return make(tuple(p[0] for p in parts), tuple(p[1] for p in parts))


def logical_divide(layout: Layout, tiler: Layout) -> Layout:
    """``(tile, rest)``: `layout` split by `tiler` (``composition(layout, (tiler, complement(tiler)))``)."""
    sz = size(coalesce(layout))
    check(is_int(sz), f"logical_divide needs a static layout size (the complement cotarget), got {sz}")
    return composition(layout, make_layout_concat([tiler, complement(tiler, sz)]))


def logical_product(block: Layout, tiler: Layout) -> Layout:
    """``(block, rest)``: `block` repeated as `tiler` says over the codomain it leaves free."""
    bs, tc = size(block), cosize(tiler)
    check(is_int(bs) and is_int(tc), f"logical_product needs a static block size and tiler cosize, got {bs}, {tc}")
    rest = composition(complement(block, bs * tc), tiler)
    return make_layout_concat([block, rest])


def tiled_product(block: Layout, tiler: Layout) -> Layout:
    """`logical_product` with its rest modes unpacked beside the block: ``(block, rest_0, rest_1, ...)``."""
    product = logical_product(block, tiler)
    rest = product[1]
    if rank(rest) == 1:
        return product
    return make_layout_concat([product[0], *(rest[i] for i in range(rank(rest)))])


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Mode ``i`` is ``(block_i, rest_i)``: a per-mode coordinate covers block extent x tiler extent."""
    r = max(rank(block), rank(tiler))
    scalar = make(1, 0)
    bm = [block[i] if i < rank(block) else scalar for i in range(r)]
    tm = [tiler[i] if i < rank(tiler) else scalar for i in range(r)]
    product = logical_product(make_layout_concat(bm), make_layout_concat(tm))
    padded, rest = product[0], product[1]
    check(rank(rest) == r, f"blocked_product: rest profile {rest.shape} does not match the tiler rank {r}")
    return make_layout_concat([make_layout_concat([padded[i], rest[i]]) for i in range(r)])


# ---------------------------------------------------------------------------------------------- makers
def _compact(shape: PyIntTuple, reverse: bool) -> PyIntTuple:
    acc: list[Any] = [1]

    def go(s: PyIntTuple) -> PyIntTuple:
        if is_tuple(s):
            order = range(len(s) - 1, -1, -1) if reverse else range(len(s))
            out: list[Any] = [None] * len(s)
            for i in order:
                out[i] = go(s[i])
            return tuple(out)
        if is_int(s) and s == 1:
            return 0
        stride = acc[0]
        acc[0] = it.mul_leaf(acc[0], s)
        return stride

    return go(shape)


def make_column_major_layout(shape: Any) -> Layout:
    sh = python_form(shape)
    return make(sh, _compact(sh, reverse=False))


def make_row_major_layout(shape: Any) -> Layout:
    sh = python_form(shape)
    return make(sh, _compact(sh, reverse=True))


def make_identity_layout(shape: Any) -> Layout:
    """Each leaf at path ``(p0, p1, ..)`` gets the stride ``E(p0, p1, ..)``: the layout maps a coordinate to itself."""
    sh = python_form(shape)

    def go(s: PyIntTuple, path: tuple[int, ...]) -> PyIntTuple:
        if is_tuple(s):
            return tuple(go(x, (*path, i)) for i, x in enumerate(s))
        return it.ScaledBasis(1, path)

    return make(sh, go(sh, ()))


def make_layout(shape: Any, stride: Any = None) -> Layout:
    """``make_layout(shape, stride)``; without a stride the compact column-major one; ``make_layout([l0, l1])``
    concatenates layouts."""
    if stride is None and isinstance(shape, (tuple, list)) and shape and all(isinstance(x, Layout) for x in shape):
        return make_layout_concat(list(shape))
    if stride is None:
        return make_column_major_layout(shape)
    return make(python_form(shape), python_form(stride))


def restrict(layout: Layout, region: Sequence[Any]) -> tuple[PyIntTuple, Layout]:
    """``(offset, sub)`` with ``layout(mins + c) == offset + sub(c)`` on the sub-tile `region` (one Range per
    top-level mode; an extent-1 range drops its mode)."""
    region = list(region)
    r = rank(layout)
    check(len(region) == r, f"Restrict: region rank {len(region)} != layout rank {r}")
    mins, subs = [], []
    for i, rng in enumerate(region):
        mins.append(it.python_form(rng.min))
        extent = it.python_form(rng.extent)
        if is_int(extent) and extent == 1:
            continue
        subs.append(layout[i].with_shape(extent))
    offset = layout(tuple(mins))
    return offset, (make_layout_concat(subs) if subs else make(1, 0))


__all__ = ["Layout", "blocked_product", "coalesce", "complement", "composition", "coshape", "cosize", "crd2idx",
           "filter", "flatten", "left_inverse", "logical_divide", "logical_product", "make", "make_column_major_layout",
           "make_identity_layout", "make_layout", "make_layout_concat", "make_row_major_layout", "rank", "restrict",
           "right_inverse", "size", "tiled_product"]
