"""Pointer helpers of the dialect's lowerings: ``&buf[idx]`` operands, ``tvm_access_ptr`` values (built, offset,
read for their element dtype, made access-free), and ``T.access_ptr`` arguments resolved to ``tvm_access_ptr``."""

from __future__ import annotations

import dataclasses
from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import utils as C


def addr_of(load: Any) -> Any:
    """``&buf[idx]`` of a barrier / register element."""
    return tirx.address_of(load)


def is_call(x: Any, name: str) -> bool:
    return isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == name


def access_ptr(dtype: str, data: Any, offset: Any, extent: Any, mask: int) -> Any:
    """``tvm_access_ptr`` to `extent` `dtype` elements of `data` from `offset`; `mask` the access (1 read, 2 write,
    0 none: no block barrier is planned for it)."""
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(dtype), data, offset, extent, mask)


def _rebuilt(ptr: Any, offset: Any = None, mask: Any = None) -> Any:
    a = list(ptr.args)
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", a[0], a[1], a[2] if offset is None else offset, a[3],
                            a[4] if mask is None else mask)


def ptr_dtype(ptr: Any) -> str:
    """The element dtype a ``tvm_access_ptr`` points at (uint8 for other pointers)."""
    if is_call(ptr, "tirx.tvm_access_ptr"):
        return str(ptr.args[0].ty.dtype)
    if is_call(ptr, "tirx.address_of"):
        return str(ptr.args[0].ty.dtype)
    return "uint8"


def ptr_add(ptr: Any, offset: Any) -> Any:
    """`ptr` advanced by `offset` elements."""
    if C.is_const(offset, 0):
        return ptr
    if is_call(ptr, "tirx.tvm_access_ptr"):
        return _rebuilt(ptr, offset=ptr.args[2] + offset)
    if is_call(ptr, "tirx.address_of"):
        load = ptr.args[0]
        idx = list(load.indices)
        idx[-1] = idx[-1] + offset
        return tirx.address_of(tirx.BufferLoad(load.source, idx))
    raise TypeError(f"cannot offset pointer {ptr}")


def unsynced(ptr: Any) -> Any:
    """`ptr` with access mask 0, as the TMA copies' shared pointers: the scale-factor staging of a warp-specialised
    kernel is ordered by its mbarriers and tcgen05 fences, not by block barriers (which cannot sit inside the
    warps' branches)."""
    if not is_call(ptr, "tirx.tvm_access_ptr"):
        return ptr
    return _rebuilt(ptr, mask=0)


def resolve_pointer(x: Any) -> Any:
    """A ``T.access_ptr`` value (core's ``tl.access_ptr(element, extent, rw_mask)``) as the ``tvm_access_ptr`` it
    lowers to, so the dialect's lowerings (and the passes after them) see the buffer, dtype and offset."""
    if not is_call(x, "tl.access_ptr"):
        return x
    from tilelang.backend.sdk import linear_index

    load, extent, mask = x.args[0], x.args[1], x.args[2]
    buf = load.source
    return buf.access_ptr(int(C.as_int(mask) or 3), offset=linear_index(buf, list(load.indices)), extent=extent)


def with_resolved_pointers(ctx: Any) -> Any:
    """`ctx` with its call's ``T.access_ptr`` arguments resolved (`resolve_pointer`)."""
    args = ctx.args
    if not dataclasses.is_dataclass(ctx) or not any(is_call(a, "tl.access_ptr") for a in args):
        return ctx
    call = tvm.ir.Call(ctx.call.op, [resolve_pointer(a) for a in args], ret_ty=ctx.call.ty)
    return dataclasses.replace(ctx, call=call)
