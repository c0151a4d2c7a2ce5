"""``webgpu.legalize_float_literals`` (``device_module``): WGSL has no infinity or NaN literal (TVM prints
``inff``); they become ``bitcast<f32>`` of their bit pattern. NaN tests (``isnan(x)``, which TVM spells
``x != x``) become tests of the bits as well: WGSL lets an implementation assume that no value is NaN, and
naga / Vulkan drivers do fold ``x != x`` to false (a NaN-propagating ``T.reduce_max`` would lose its NaN).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.transform import utils as C

_F32_ABS_MASK, _F32_INF_BITS = 0x7FFFFFFF, 0x7F800000


def _is_nan_bits(x: Any) -> Any:
    """``x`` (float16 / float32, any lanes) is NaN, read from its bits: exponent all ones, mantissa not zero."""
    from tvm import tirx

    dtype = x.ty.dtype
    lanes = int(dtype.lanes)

    def of(name: str) -> str:
        return name if lanes == 1 else f"{name}x{lanes}"

    if int(dtype.bits) == 16:
        x = tirx.Cast(of("float32"), x)  # a NaN stays a NaN when widened
    bits = tirx.reinterpret(of("uint32"), x)

    def u32(v: int) -> Any:
        c = tirx.IntImm("uint32", v)
        return c if lanes == 1 else tirx.Broadcast(c, lanes)

    return tirx.bitwise_and(bits, u32(_F32_ABS_MASK)) > u32(_F32_INF_BITS)


def LegalizeFloatLiterals(target: Any = None) -> Any:
    """Infinite and NaN float literals become bitcasts of their IEEE bit pattern (WGSL has no such literal);
    NaN tests (``isnan(x)`` / ``x != x``) become tests of ``x``'s bits."""
    import struct

    import tvm_ffi
    from tvm import tirx
    from tvm.ir import Call, Op

    isnan_op = Op.get("tirx.isnan")

    def on_float(imm: Any) -> Any:
        value = float(imm.value)
        if math.isfinite(value):
            return imm
        dtype = str(imm.ty.dtype) if hasattr(imm.ty, "dtype") else str(imm.dtype)
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        as_f32 = tirx.reinterpret("float32", tirx.IntImm("uint32", bits))
        return as_f32 if dtype == "float32" else tirx.Cast(dtype, as_f32)

    def is_float(e: Any) -> bool:
        dtype = e.ty.dtype
        return str(dtype).startswith("float") and int(dtype.bits) in (16, 32)

    def on_ne(ne: Any) -> Any:
        if is_float(ne.a) and tvm_ffi.structural_equal(ne.a, ne.b):
            return _is_nan_bits(ne.a)
        return ne

    def on_call(call: Any) -> Any:
        if call.op.same_as(isnan_op) and is_float(call.args[0]):
            return _is_nan_bits(call.args[0])
        return call

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.legalize_float_literals")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_map(func.body, [(tirx.NE, on_ne), (Call, on_call)])
        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.FloatImm, on_float)))

    return legalize

