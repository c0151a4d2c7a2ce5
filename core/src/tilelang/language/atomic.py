"""Atomics: ``atomic_add`` / ``atomic_max`` / ``atomic_min`` on regions or elements, ``atomic_addx2`` / ``x4``,
``atomic_or``, ``atomic_load`` and ``atomic_store``.

Two forms, as in the reference: when either operand has extents (a buffer or a region ``A[a:b, c]``) the call is
the tile operator ``tl.atomic`` (element-wise over the region, emitted at once); when both are scalars
(``T.atomic_add(B[i], v)``) it is an element intrinsic (``tl.atomic_add_elem_op``, ...) returned as an
expression: a statement on its own, or, with ``return_prev=True``, the value held before the update.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R
from tilelang.language.dtypes import cast

MEMORY_ORDERS = {"relaxed": 0, "consume": 1, "acquire": 2, "release": 3, "acq_rel": 4, "seq_cst": 5}
_LOAD_ORDERS = ("relaxed", "consume", "acquire", "seq_cst")
_STORE_ORDERS = ("relaxed", "release", "seq_cst")


def _i32(v: Any) -> Any:
    from tvm import tirx

    return tirx.IntImm("int32", int(v))


def has_extent(x: Any) -> bool:
    """Whether `x` is a buffer or a region (rather than one element or a scalar)."""
    return R.is_buffer(x) or R.is_region(x)


def _memory_order(op: str, memory_order: Any, allowed: tuple[str, ...] = tuple(MEMORY_ORDERS)) -> int:
    if memory_order is None:
        return 0
    if memory_order not in allowed:
        raise ValueError(f"{op} does not support memory_order={memory_order!r}; expected one of {sorted(allowed)}")
    return MEMORY_ORDERS[memory_order]


def _element(x: Any, what: str, op: str) -> Any:
    """`x` as one element ``A[i, ...]`` (a buffer or region gives its first element)."""
    from tvm import tirx

    if R.is_load(x):
        if len(x.indices) != len(R.buffer_shape(x.source)):
            raise KernelTypeError(f"{op}: {what} {R.describe(x)} has {len(x.indices)} indices for "
                                  f"{len(R.buffer_shape(x.source))} dimensions")
        return x
    if R.is_region(x):
        return tirx.BufferLoad(x.source, [r.min for r in x.region])
    if R.is_buffer(x):
        return tirx.BufferLoad(x, [0] * len(R.buffer_shape(x)))
    raise KernelTypeError(f"{op}: {what} must be a buffer element such as A[i], got {R.describe(x)}")


def _tile(kind: str, dst: Any, value: Any, memory_order: Any, return_prev: bool, use_tma: bool) -> None:
    """The region form: one ``tl.atomic`` tile operator."""
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.tileops import _operand, _pair, _str

    op = f"T.atomic_{kind}"
    if return_prev:
        raise KernelTypeError(f"{op}: return_prev is not supported for tile-region atomics (the operands have "
                              "extents); use element atomics such as T.atomic_add(B[i], v, return_prev=True)")
    order = _memory_order(op, memory_order)
    dst = _operand(dst, "dst", op)
    if has_extent(value):
        src_r, dst_r = _pair(_operand(value, "value", op), dst, op)
        se, de = R.region_extents(src_r), R.region_extents(dst_r)
        if not R.same_extents(se, de):
            raise KernelTypeError(f"{op} shape mismatch: value {R.format_extents(se)}, dst {R.format_extents(de)}")
        val = src_r
    else:
        dst_r = R.to_region(dst)
        val = cast(value, R.buffer_dtype(dst_r.source))
    extra = [_i32(bool(use_tma)), _i32(order)] if use_tma or order else []
    B.evaluate(_ops.tile_call("tl.atomic", [dst_r, val, _str(kind), *extra]))


def _rmw(kind: str, dst: Any, value: Any, memory_order: Any, return_prev: bool, use_tma: bool) -> Any:
    op = f"T.atomic_{kind}"
    _state.require(op)
    if has_extent(dst) or has_extent(value):
        _tile(kind, dst, value, memory_order, return_prev, use_tma)
        return None
    if not R.is_load(dst):
        raise KernelTypeError(f"{op}: dst must be a buffer, a region or a buffer element, got {R.describe(dst)}")
    if use_tma:
        raise KernelTypeError(f"{op}: use_tma=True needs a region destination (a TMA reduction copies a tile)")
    elem = _element(dst, "dst", op)
    dtype = R.buffer_dtype(elem.source)
    name = f"tl.atomic_{kind}_ret_elem_op" if return_prev else f"tl.atomic_{kind}_elem_op"
    args = [elem, cast(value, dtype), _i32(_memory_order(op, memory_order))]
    return _ops.intrin_call(name, dtype if return_prev else "handle", args)


def atomic_add(dst: Any, value: Any, memory_order: str | None = None, return_prev: bool = False,
               use_tma: bool = False, annotations: dict | None = None) -> Any:
    """Atomically ``dst += value``: element-wise over a region, or on one element (then, with
    ``return_prev=True``, the result is the value held before the addition)."""
    return _rmw("add", dst, value, memory_order, return_prev, use_tma)


def atomic_max(dst: Any, value: Any, memory_order: str | None = None, return_prev: bool = False,
               annotations: dict | None = None) -> Any:
    """Atomically ``dst = max(dst, value)`` (see `atomic_add`)."""
    return _rmw("max", dst, value, memory_order, return_prev, False)


def atomic_min(dst: Any, value: Any, memory_order: str | None = None, return_prev: bool = False,
               annotations: dict | None = None) -> Any:
    """Atomically ``dst = min(dst, value)`` (see `atomic_add`)."""
    return _rmw("min", dst, value, memory_order, return_prev, False)


def _vector_add(lanes: int, dst: Any, value: Any, return_prev: bool) -> Any:
    op = f"T.atomic_addx{lanes}"
    _state.require(op)
    d, v = _element(dst, "dst", op), _element(value, "value", op)
    dtype = R.buffer_dtype(d.source)
    name = f"tl.atomic_addx{lanes}_ret_elem_op" if return_prev else f"tl.atomic_addx{lanes}_elem_op"
    return _ops.intrin_call(name, f"{dtype}x{lanes}" if return_prev else "handle", [d, v])


def atomic_addx2(dst: Any, value: Any, return_prev: bool = False) -> Any:
    """Atomically add two consecutive elements of `value` into `dst` (buffers, regions or first elements)."""
    return _vector_add(2, dst, value, return_prev)


def atomic_addx4(dst: Any, value: Any, return_prev: bool = False) -> Any:
    """Atomically add four consecutive elements of `value` into `dst` (buffers, regions or first elements)."""
    return _vector_add(4, dst, value, return_prev)


def atomic_load(src: Any, memory_order: str = "seq_cst") -> Any:
    """The value of element `src`, read atomically with `memory_order` (relaxed, consume, acquire, seq_cst)."""
    _state.require("T.atomic_load")
    elem = _element(src, "src", "T.atomic_load")
    order = _memory_order("atomic_load", memory_order, _LOAD_ORDERS)
    from tilelang.language.views import access_ptr

    # the element travels as ``T.access_ptr(src, "r")``, as in the reference (LowerAccessPtr sees the pointer)
    pointer = access_ptr(elem, "r")
    return _ops.intrin_call("tl.atomic_load_elem_op", R.buffer_dtype(elem.source), [pointer, _i32(order)])


def atomic_store(dst: Any, src: Any, memory_order: str = "seq_cst") -> Any:
    """Store `src` into element `dst` atomically with `memory_order` (relaxed, release, seq_cst)."""
    _state.require("T.atomic_store")
    elem = _element(dst, "dst", "T.atomic_store")
    order = _memory_order("atomic_store", memory_order, _STORE_ORDERS)
    return _ops.intrin_call("tl.atomic_store_elem_op", "handle",
                            [elem, cast(src, R.buffer_dtype(elem.source)), _i32(order)])


def atomic_or(dst: Any, value: Any, memory_order: str | None = None) -> Any:
    """Atomically ``dst |= value`` on one integer element."""
    _state.require("T.atomic_or")
    if has_extent(dst) or has_extent(value):
        raise KernelSyntaxError("T.atomic_or supports single elements only (T.atomic_or(B[i], v))")
    elem = _element(dst, "dst", "T.atomic_or")
    dtype = R.buffer_dtype(elem.source)
    if not dtype.startswith(("int", "uint")):
        raise KernelTypeError(f"T.atomic_or needs an integer destination, got {dtype}")
    args = [elem, cast(value, dtype), _i32(_memory_order("atomic_or", memory_order))]
    return _ops.intrin_call("tl.atomic_or_elem_op", "handle", args)
