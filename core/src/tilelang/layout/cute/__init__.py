"""The CuTe layout algebra in TileLang: integer tuples, ``shape:stride`` layouts, swizzles and their algebra.

`Layout`, `IntTuple`, `Swizzle` and `ComposedLayout` are IR objects (``structural_equal`` compares them,
``str()`` prints CuTe spelling); shapes, strides and evaluation results come back in Python form (nested
tuples of ints, PrimExprs and `ScaledBasis`). See `tilelang.layout.cute.layout` for the algebra.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.layout.cute import int_tuple as _it
from tilelang.layout.cute.int_tuple import (
    E,
    IntTuple,
    IntTupleConst,
    IntTuplePrimExpr,
    IntTupleScaledBasis,
    IntTupleTuple,
    LayoutAlgebraError,
    PyIntTuple,
    ScaledBasis,
    from_python,
    to_python,
)
from tilelang.layout.cute.layout import (
    Layout,
    blocked_product,
    coalesce,
    complement,
    composition,
    coshape,
    cosize,
    filter,
    flatten,
    left_inverse,
    logical_divide,
    logical_product,
    make_column_major_layout,
    make_identity_layout,
    make_layout,
    make_row_major_layout,
    rank,
    restrict,
    right_inverse,
    size,
    tiled_product,
)
from tilelang.layout.cute.swizzle import ComposedLayout, Swizzle

IntTupleLike = int | Any | ScaledBasis | Sequence | IntTuple
ModeLike = int | Sequence[int]


def product(shape: IntTupleLike) -> PyIntTuple:
    """The product of the leaves of a shape (a PrimExpr when one is dynamic)."""
    return _it.product(_it.python_form(shape))


def flatten_to_tuple(value: IntTupleLike) -> tuple:
    """The leaves of a (nested) shape or stride as a flat tuple."""
    return tuple(_it.leaves(_it.python_form(value)))


def congruent(a: IntTupleLike, b: IntTupleLike) -> bool:
    """Same tree structure."""
    return _it.congruent(_it.python_form(a), _it.python_form(b))


def compatible(a: IntTupleLike, b: IntTupleLike) -> bool:
    """Whether shape `b` refines shape `a` (directional: a leaf of `a` may cover a subtree of `b` of equal size)."""
    return _it.compatible(_it.python_form(a), _it.python_form(b))


__all__ = ["E", "ComposedLayout", "IntTuple", "IntTupleConst", "IntTupleLike", "IntTuplePrimExpr",
           "IntTupleScaledBasis", "IntTupleTuple", "Layout", "LayoutAlgebraError", "ModeLike", "PyIntTuple",
           "ScaledBasis", "Swizzle", "blocked_product", "coalesce", "compatible", "complement", "composition",
           "congruent", "coshape", "cosize", "filter", "flatten", "flatten_to_tuple", "from_python",
           "left_inverse", "logical_divide", "logical_product", "make_column_major_layout", "make_identity_layout",
           "make_layout", "make_row_major_layout", "product", "rank", "restrict", "right_inverse", "size",
           "tiled_product", "to_python"]
