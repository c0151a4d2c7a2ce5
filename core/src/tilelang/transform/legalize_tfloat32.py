"""LegalizeTFloat32: ``T.tfloat32`` (``custom[tfloat32]``) values become float32 values holding tf32 numbers.

TF32 is float32's layout with a 10-bit mantissa: tensor cores read float32 registers as tf32 operands (the CUDA
backend's float32 gemms are tf32 gemms), and a tensor of tf32 is a float32 tensor. TVM's arithmetic and code
generators know no custom dtype (``Cannot match type custom[tfloat32] vs int32``), so, before anything else
runs, every tf32 buffer (parameters included), variable, constant and operation becomes its float32
counterpart, and a conversion to tf32 from a type with more mantissa bits (float32, float64, integers) rounds
the value to tf32's precision: to nearest, ties away from zero, as ``cvt.rna.tf32.f32`` does. Conversions from
16-bit and narrower floats are exact; arithmetic on tf32 values runs in float32.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

_TF32 = "custom[tfloat32]"
_FLOAT32_MAX = 3.4028234663852886e38
_ARITH = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Mod, tirx.FloorDiv, tirx.FloorMod, tirx.Min, tirx.Max)


def _dt(e: Any) -> str:
    return str(e.ty.dtype) if hasattr(e, "ty") else str(e.dtype)


def _is_tf32(dtype: str) -> bool:
    return dtype == _TF32 or dtype.startswith(_TF32 + "x")


def _f32(dtype: str) -> str:
    return "float32" + dtype[len(_TF32):]


def _exact_in_tf32(dtype: str) -> bool:
    """Whether every value of `dtype` is a tf32 number (floats of at most 10 mantissa bits)."""
    base = dtype.split("x")[0] if not dtype.startswith("float8") else dtype
    return base in ("float16", "bfloat16", "bool") or base.startswith(("float8", "float6", "float4"))


def round_to_tf32(value: float) -> float:
    """`value` rounded to tf32 (nearest, ties away from zero); infinities and NaN are kept."""
    if not math.isfinite(value):
        return value
    if abs(value) > _FLOAT32_MAX:  # beyond float32: the conversion to float32 already overflows
        return math.copysign(math.inf, value)
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    bits = ((bits + 0x1000) & 0xFFFFE000) & 0xFFFFFFFF
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _round_expr(x: Any) -> Any:
    """The float32 expression `x` rounded to tf32 in integer arithmetic (see `round_to_tf32`); NaN and
    infinities keep their bits."""
    dtype = _dt(x)
    lanes = dtype[len("float32"):]
    u32 = "uint32" + lanes
    bits = tirx.Var("tf32_bits", u32)

    def const(v: int) -> Any:
        c = tirx.IntImm("uint32", v)
        return tirx.Broadcast(c, int(lanes[1:])) if lanes else c

    rounded = tirx.bitwise_and(bits + const(0x1000), const(0xFFFFE000))
    special = tirx.bitwise_and(bits, const(0x7F800000)) == const(0x7F800000)
    return tirx.call_intrin(dtype, "tirx.reinterpret", tirx.Let(bits, tirx.call_intrin(u32, "tirx.reinterpret", x),
                                                                tirx.Select(special, bits, rounded)))


def _legal_buffer(buf: Any) -> Any:
    ty = buf.ty
    return tirx.decl_buffer(list(ty.shape), _f32(str(ty.dtype)), name=str(buf.name),
                            strides=list(ty.strides) or None, elem_offset=ty.elem_offset,
                            scope=str(ty.storage_scope), data_alignment=int(ty.data_alignment),
                            offset_factor=int(ty.offset_factor))


def legalize_tfloat32(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """`func` with its tf32 values as float32 ones (see the module docstring)."""
    buffers = [p for p in func.params if tirx.is_buffer_var(p)]
    buffers += [a.buffer for a in C.allocations(func.body)]
    buffers += [d.buffer for d in C.collect(func.body, tirx.DeclBuffer)]
    remap: dict[Any, Any] = {b: _legal_buffer(b) for b in buffers if _is_tf32(str(b.ty.dtype))}
    for v in C.collect(func.body, tvm.ir.Var, lambda v: not tirx.is_buffer_var(v) and _is_tf32(_dt(v))):
        remap.setdefault(v, tirx.Var(str(v.name), _f32(_dt(v))))
    if not remap and not C.collect(func.body, tirx.Cast, lambda e: _is_tf32(_dt(e))) and not C.collect(
            func.body, tirx.FloatImm, lambda e: _is_tf32(_dt(e))):
        return func
    body = C.substitute(func.body, remap)

    def on_load(e: Any, m: Any) -> Any:  # a load keeps the dtype it was built with
        e = m.default_mutate(e)
        return tirx.BufferLoad(e.source, list(e.indices), span=e.span) if _is_tf32(_dt(e)) else e

    def on_cast(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        if not _is_tf32(_dt(e)):
            return e
        source = _dt(e.value)
        if isinstance(e.value, (tirx.FloatImm, tirx.IntImm)):
            return tirx.FloatImm(_f32(_dt(e)), round_to_tf32(float(e.value.value)))
        value = tirx.Cast(_f32(_dt(e)), e.value) if source != _f32(_dt(e)) else e.value
        return value if _exact_in_tf32(source) else _round_expr(value)

    def on_float(e: Any, m: Any) -> Any:
        return tirx.FloatImm(_f32(_dt(e)), round_to_tf32(float(e.value))) if _is_tf32(_dt(e)) else e

    def on_arith(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return type(e)(e.a, e.b) if _is_tf32(_dt(e)) else e

    def on_call(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return tvm.ir.Call(_f32(_dt(e)), e.op, list(e.args)) if _is_tf32(_dt(e)) else e

    def on_select(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return tirx.Select(e.condition, e.true_value, e.false_value) if _is_tf32(_dt(e)) else e

    def on_broadcast(e: Any, m: Any) -> Any:
        e = m.default_mutate(e)
        return tirx.Broadcast(e.value, e.lanes) if _is_tf32(_dt(e)) else e

    body = tvm_ffi.structural_mutate(body, [(tvm.ir.TensorLoad, on_load), (tirx.Cast, on_cast),
                                            (tirx.FloatImm, on_float), *[(t, on_arith) for t in _ARITH],
                                            (tvm.ir.Call, on_call), (tirx.Select, on_select),
                                            (tirx.Broadcast, on_broadcast)])
    params = [remap.get(p, p) for p in func.params]
    return tirx.PrimFunc(params, body, func.ret_type, func.attrs)


def LegalizeTFloat32(target: Any = None) -> tvm.transform.Pass:
    """Rewrite tf32 values as float32 ones holding tf32 numbers (see the module docstring)."""

    @C.prim_func_pass("tl.LegalizeTFloat32")
    def legalize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return legalize_tfloat32(func)

    return legalize
