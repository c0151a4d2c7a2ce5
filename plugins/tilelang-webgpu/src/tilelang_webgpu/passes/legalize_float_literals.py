"""``webgpu.legalize_float_literals`` (``device_module``): WGSL has no infinity or NaN literal (TVM prints
``inff``); they become ``bitcast<f32>`` of their bit pattern. NaN tests (``isnan(x)``, which TVM spells
``x != x``) become tests of the bits as well: WGSL lets an implementation assume that no value is NaN, and
naga / Vulkan drivers do fold ``x != x`` to false (a NaN-propagating ``T.reduce_max`` would lose its NaN).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.transform import utils as C


def LegalizeFloatLiterals(target: Any = None) -> Any:
    """Infinite and NaN float literals become bitcasts of their IEEE bit pattern (WGSL has no such literal);
    NaN tests (``isnan(x)`` / ``x != x``) become tests of ``x``'s bits."""
    import struct

    import tvm_ffi
    from tvm import tirx

    from tilelang.backend.sdk import nan_tests_by_bits

    def on_float(imm: Any) -> Any:
        value = float(imm.value)
        if math.isfinite(value):
            return imm
        dtype = str(imm.ty.dtype) if hasattr(imm.ty, "dtype") else str(imm.dtype)
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        as_f32 = tirx.reinterpret("float32", tirx.IntImm("uint32", bits))
        return as_f32 if dtype == "float32" else tirx.Cast(dtype, as_f32)

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.legalize_float_literals")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        body = nan_tests_by_bits(func.body)
        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.FloatImm, on_float)))

    return legalize

