"""``metal.legalize_bf16_casts`` (`LegalizeBf16Casts`, ``device_module``): a cast between ``bfloat16`` and
``float16`` goes through ``float32``.

TVM's Metal codegen spells a cast as a C-style cast, and MSL (clang's ``__bf16``) refuses ``(bfloat)h`` for a
``half`` ``h`` and ``(half)b`` for a ``bfloat`` ``b`` ("C-style cast from 'half' to 'bfloat' is not allowed"); every
other scalar type converts to and from ``bfloat`` directly. ``float32`` holds every ``float16`` and ``bfloat16``
value exactly, so the detour rounds once, as the direct conversion would.
"""

from __future__ import annotations

from typing import Any

_HALVES = ("float16", "bfloat16")


def LegalizeBf16Casts(target: Any = None) -> Any:
    """``Cast(bfloat16, x: float16)`` -> ``Cast(bfloat16, Cast(float32, x))``, and the reverse (see the module
    docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def on_cast(cast: Any) -> Any:
        to, src = cast.ty.dtype, cast.value.ty.dtype
        if {str(to).split("x")[0], str(src).split("x")[0]} != set(_HALVES):  # "bfloat16x4" -> "bfloat16"
            return cast
        lanes = int(src.lanes)
        wide = "float32" if lanes == 1 else f"float32x{lanes}"
        return tirx.Cast(str(to), tirx.Cast(wide, cast.value))

    @C.prim_func_pass("metal.legalize_bf16_casts")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_map(func.body, (tirx.Cast, on_cast))
        return func if body.same_as(func.body) else C.with_body(func, body)

    return legalize
