"""Pointers and views: ``T.access_ptr``, ``T.ptr``, ``T.make_tensor``, ``T.reshape`` and ``T.view``.

A view (``T.reshape`` / ``T.view``) is a new buffer over the same storage (a ``DeclBuffer`` whose data is the
source's), with another shape and possibly another dtype of the same total size in bits. ``T.make_tensor``
declares a buffer over a pointer: a ``T.ptr`` parameter, or an address held in an int64 (a pointer table
``T.Tensor([n], T.ptr)``).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R
from tilelang.language.dtypes import canonical

_RW = {"r": 1, "w": 2, "rw": 3}


def _i32(v: Any) -> Any:
    from tvm import tirx

    return tirx.IntImm("int32", int(v)) if isinstance(v, int) else v


def access_ptr(base: Any, access_type: str | int = "r", *extents: Any, offset: Any = 0, extent: Any = None,
               ignore_last_ndim: int = 0) -> Any:
    """A pointer to `base` (a buffer, region or element) for `extent` elements (default: the product of
    `extents`, else the region's size, else one element), accessed as ``"r"``, ``"w"`` or ``"rw"``.

    The call (``tl.access_ptr(element, extent, rw_mask)``) keeps the element, so passes still see the buffer.
    """
    from tvm import tirx

    if isinstance(access_type, str):
        if access_type not in _RW:
            raise ValueError(f'Invalid access_type="{access_type}", expected one of {sorted(_RW)}.')
        mask = _RW[access_type]
    elif isinstance(access_type, int) and not isinstance(access_type, bool):
        mask = int(access_type)
    else:
        raise TypeError(f"T.access_ptr access_type must be str or int, but got {type(access_type)}.")
    if len(extents) == 1 and isinstance(extents[0], (list, tuple)):
        extents = tuple(extents[0])
    region_extents = None
    if R.is_region(base):
        buf, mins = base.source, [r.min for r in base.region]
        region_extents = [r.extent for r in base.region]
    elif R.is_load(base):
        buf, mins = base.source, list(base.indices)
    elif R.is_buffer(base):
        buf, mins = base, [tirx.IntImm("int32", 0) for _ in R.buffer_shape(base)]
    else:
        raise TypeError(f"T.access_ptr expects a Buffer, BufferLoad or BufferRegion, but got {type(base)}.")
    if ignore_last_ndim:
        keep = max(0, len(mins) - int(ignore_last_ndim))
        mins = mins[:keep] + [tirx.IntImm("int32", 0)] * (len(mins) - keep)
    if not (isinstance(offset, int) and offset == 0):
        if len(mins) != 1:
            raise ValueError("T.access_ptr(offset!=0) is only supported for 1D buffers; index the element instead")
        mins = [mins[0] + offset]
    if extent is not None:
        total = extent
    elif extents:
        total = math.prod(extents) if all(isinstance(e, int) for e in extents) else _product(extents)
    elif region_extents is not None:
        total = _product(region_extents)
    else:
        total = 1
    return _ops.intrin_call("tl.access_ptr", "handle", [tirx.BufferLoad(buf, mins), _i32(total), _i32(mask)])


def _product(values: Any) -> Any:
    out: Any = 1
    for v in values:
        out = out * v
    return out


def ptr(dtype: Any = None, storage_scope: str = "global", *, is_size_var: bool = False) -> Any:
    """A pointer Var (the parameter annotation ``p: T.ptr``); as a tensor dtype (``T.Tensor([n], T.ptr)``), a table
    of addresses stored as int64."""
    from tvm.script.ir_builder import tirx as B

    return B.handle(dtype=None if dtype is None else canonical(dtype), storage_scope=storage_scope)


ptr.__tilelang_dtype__ = "int64"  # type: ignore[attr-defined]


def _bits(shape: Any, dtype: str) -> Any:
    import tvm

    dt = tvm.DataType(dtype)
    return _product(list(shape)) * dt.bits * dt.lanes


def _same_size(a: Any, b: Any) -> bool:
    from tvm import tirx

    from tilelang.ir.region import analyzer

    if isinstance(a, int) and isinstance(b, int):
        return a == b
    a = tirx.const(a, "int64") if isinstance(a, int) else a
    b = tirx.const(b, "int64") if isinstance(b, int) else b
    return bool(analyzer().can_prove_equal(a, b))


def _declare(shape: Any, dtype: str, data: Any, scope: str, strides: Any = None) -> Any:
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.proxy import normalize_shape

    shape = normalize_shape(shape, "view shape")
    st = _state.current()
    if st is None or not st.block_frames:  # outside a kernel: just the buffer object
        return tirx.decl_buffer(shape, dtype, name="view", data=data, scope=scope, strides=strides)
    return st.fresh(B.decl_buffer(shape, dtype, data=data, strides=strides, scope=scope))


def view(src: Any, shape: Any = None, dtype: Any = None) -> Any:
    """`src`'s storage as a buffer of `shape` and `dtype` (defaults: src's); the size in bits must match."""
    from tvm import tirx

    if not R.is_buffer(src):
        raise TypeError(f"T.view expects a buffer, got {R.describe(src)}")
    new_shape = list(R.buffer_shape(src)) if shape is None else list(shape)
    new_dtype = R.buffer_dtype(src) if dtype is None else canonical(dtype)
    want, have = _bits(new_shape, new_dtype), _bits(R.buffer_shape(src), R.buffer_dtype(src))
    if not _same_size(want, have):
        raise AssertionError(f"T.reshape/view shape check failed. {want}, {have}: {R.describe(src)} has {have} bits, "
                             f"shape {new_shape} of {new_dtype} has {want}")
    return _declare(new_shape, new_dtype, tirx.buffer_data(src), R.buffer_scope(src))


def reshape(src: Any, shape: Any) -> Any:
    """`src`'s elements (row-major) as a buffer of `shape`; the number of elements must match."""
    return view(src, shape)


def make_tensor(ptr: Any, shape: Any, dtype: Any = "float32", strides: Any = None) -> Any:
    """A buffer of `shape` and `dtype` at address `ptr` (a ``T.ptr`` parameter, or an int64 address value)."""
    import tvm
    import tvm_ffi
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    st = _state.require("T.make_tensor")
    dtype = canonical(dtype)
    if hasattr(ptr, "asobject"):
        ptr = ptr.asobject()
    if not isinstance(ptr, tvm.ir.Expr):
        raise KernelTypeError(f"T.make_tensor expects a pointer (a T.ptr parameter or an int64 address), got {ptr!r}")
    if not (st.depth or st.launches) and any(ptr.same_as(p) for p in st.params) and ptr not in st.matched:
        # over a pointer parameter, at the top of the kernel: the kernel takes the tensor in the pointer's place
        from tilelang.language.tir.ir import match_buffer

        return match_buffer(ptr, shape, dtype, strides=strides)
    scope = "global"
    ty = ptr.ty
    if isinstance(ty, tvm.ir.PointerType):
        scope = str(ty.storage_scope) or "global"
    pointer = tvm.ir.PointerType(tvm.ir.PrimType(dtype), scope)
    if not isinstance(ty, tvm.ir.PointerType):  # an address held in an integer: reinterpreted as the pointer
        address = ptr if str(ty.dtype) == "int64" else tirx.Cast("int64", ptr)
        ptr = tvm.ir.Call(tvm.ir.Op.get("tirx.reinterpret"), [address], ret_ty=pointer)
    elif not tvm_ffi.structural_equal(ty, pointer):  # another element type (e.g. a void handle): retyped
        ptr = tvm.ir.Call(tvm.ir.Op.get("tirx.reinterpret"), [ptr], ret_ty=pointer)
    data = B.Bind(ptr, pointer)
    return _declare(shape, dtype, data, scope, strides)


def make_tensor_from_addr(addr: Any, shape: Any, dtype: Any = "float32", strides: Any = None,
                          storage_scope: str = "global") -> Any:
    """`make_tensor` over the address `addr` (an integer expression)."""
    return make_tensor(addr, shape, dtype, strides)
