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
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.retype import dtype_of, retype

_TF32 = "custom[tfloat32]"
_FLOAT32_MAX = 3.4028234663852886e38


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
    dtype = dtype_of(x)
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


def legalize_tfloat32(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """`func` with its tf32 values as float32 ones (see the module docstring)."""
    def convert(dtype: str, value: Any) -> Any:
        source = dtype_of(value)
        if isinstance(value, (tirx.FloatImm, tirx.IntImm)):
            return tirx.FloatImm(dtype, round_to_tf32(float(value.value)))
        value = tirx.Cast(dtype, value) if source != dtype else value
        return value if _exact_in_tf32(source) else _round_expr(value)

    return retype(func, lambda d: _f32(d) if _is_tf32(d) else None, convert, round_to_tf32)


def LegalizeTFloat32(target: Any = None) -> tvm.transform.Pass:
    """Rewrite tf32 values as float32 ones holding tf32 numbers (see the module docstring)."""

    @C.prim_func_pass("tl.LegalizeTFloat32")
    def legalize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return legalize_tfloat32(func)

    return legalize
