"""Rewrite a PrimFunc's values of some dtypes as values of others (`retype`): buffers (parameters included),
variables, constants and operations; backends and legalizing passes use it for dtypes their code generator
spells differently (``T.tfloat32`` as float32, CUDA's ``float8_e4m3`` as ``float8_e4m3fn``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

_ARITH = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Mod, tirx.FloorDiv, tirx.FloorMod, tirx.Min, tirx.Max)


def dtype_of(e: Any) -> str:
    """The dtype of a scalar expression or variable ("" for other nodes: buffer regions, handles' types)."""
    dtype = getattr(getattr(e, "ty", None), "dtype", None)
    if dtype is None:
        dtype = getattr(e, "dtype", None)
    return "" if dtype is None else str(dtype)


def _buffer(buf: Any, dtype: str) -> Any:
    ty = buf.ty
    return tirx.decl_buffer(list(ty.shape), dtype, name=str(buf.name), strides=list(ty.strides) or None,
                            elem_offset=ty.elem_offset, scope=str(ty.storage_scope),
                            data_alignment=int(ty.data_alignment), offset_factor=int(ty.offset_factor))


def retype(func: tirx.PrimFunc, rename: Callable[[str], str | None],
           convert: Callable[[str, Any], Any] | None = None,
           constant: Callable[[float], float] | None = None) -> tirx.PrimFunc:
    """`func` with every value whose dtype `rename` maps (to a new dtype string; None: kept) of the new dtype.

    ``convert(new dtype, value)`` builds a conversion into a renamed dtype (``value`` already rewritten, maybe
    of the new dtype; default a Cast); ``constant(v)`` the value of a float constant of a renamed dtype
    (default `v`). Returns `func` itself when nothing has a renamed dtype."""
    buffers = [p for p in func.params if tirx.is_buffer_var(p)]
    buffers += [a.buffer for a in C.allocations(func.body)]
    buffers += [d.buffer for d in C.collect(func.body, tirx.DeclBuffer)]
    remap: dict[Any, Any] = {}
    for b in buffers:
        new = rename(str(b.ty.dtype))
        if new is not None:
            remap[b] = _buffer(b, new)
    for v in C.collect(func.body, tvm.ir.Var, lambda v: not tirx.is_buffer_var(v) and rename(dtype_of(v))):
        remap.setdefault(v, tirx.Var(str(v.name), rename(dtype_of(v))))
    if not remap and not C.collect(func.body, tirx.PrimExpr, lambda e: rename(dtype_of(e)) is not None):
        return func
    body = C.substitute(func.body, remap)
    to = convert or (lambda dtype, value: value if dtype_of(value) == dtype else tirx.Cast(dtype, value))

    def on_load(e: Any, m: Any) -> Any:  # a load keeps the dtype it was built with
        e = m.default_mutate(e)
        return tirx.BufferLoad(e.source, list(e.indices), span=e.span) if rename(dtype_of(e)) else e

    def on_cast(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        new = rename(dtype_of(e))
        return e if new is None else to(new, e.value)

    def on_float(e: Any, m: Any) -> Any:
        new = rename(dtype_of(e))
        return e if new is None else tirx.FloatImm(new, (constant or float)(float(e.value)))

    def on_arith(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return type(e)(e.a, e.b) if rename(dtype_of(e)) else e

    def on_call(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        new = rename(dtype_of(e))
        return e if new is None else tvm.ir.Call(new, e.op, list(e.args))

    def on_select(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return tirx.Select(e.condition, e.true_value, e.false_value) if rename(dtype_of(e)) else e

    def on_broadcast(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return tirx.Broadcast(e.value, e.lanes) if rename(dtype_of(e)) else e

    body = tvm_ffi.structural_mutate(body, [(tvm.ir.TensorLoad, on_load), (tirx.Cast, on_cast),
                                            (tirx.FloatImm, on_float), *[(t, on_arith) for t in _ARITH],
                                            (tvm.ir.Call, on_call), (tirx.Select, on_select),
                                            (tirx.Broadcast, on_broadcast)])
    params = [remap.get(p, p) for p in func.params]
    return tirx.PrimFunc(params, body, func.ret_type, func.attrs)


_E4M3 = "float8_e4m3"


def e4m3_as_fn(dtype: str) -> str | None:
    """``float8_e4m3fn`` (with `dtype`'s lanes) for ``float8_e4m3`` / ``float8_e4m3xN``, else None."""
    if dtype == _E4M3 or dtype.startswith(_E4M3 + "x"):
        return _E4M3 + "fn" + dtype[len(_E4M3):]
    return None


def Float8E4M3AsFn(name: str) -> tvm.transform.Pass:
    """A pass (named `name`, e.g. ``cuda.float8_e4m3_as_fn``) rewriting every ``float8_e4m3`` buffer (parameters
    included), value and conversion as ``float8_e4m3fn``: a backend whose ``float8_e4m3`` is the ``fn`` format (no
    infinities, largest value 448; torch's ``float8_e4m3fn``), as the reference TileLang's is off ROCm."""

    @C.prim_func_pass(name)
    def float8_e4m3_as_fn(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return retype(func, e4m3_as_fn)

    return float8_e4m3_as_fn
