"""LimitVectorWidth: split vectorized loops wider than Metal's 4-lane vectors.

MSL has no ``float32x32``: TVM's Metal codegen fails on any vectorized loop wider than 4 ("Cannot convert
type float32x32 to Metal type"). A vectorized loop of extent ``n > 4`` becomes a serial loop over ``n / 4``
chunks of a 4-lane vectorized loop when 4 divides ``n``, else a serial loop.
"""

from __future__ import annotations

from typing import Any

import tvm

MAX_LANES = 4


def LimitVectorWidth(target: Any = None) -> tvm.transform.Pass:
    """Split vectorized loops to at most `MAX_LANES` lanes (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import _common as C

    def split(loop: Any) -> Any:
        extent = C.as_int(loop.extent)
        if loop.kind != tirx.ForKind.VECTORIZED or (extent is not None and extent <= MAX_LANES):
            return loop
        if extent is None or extent % MAX_LANES or not C.is_const(loop.min, 0):
            return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
        outer = tirx.Var(f"{loop.loop_var.name}_o", "int32")
        inner = tirx.Var(f"{loop.loop_var.name}_v", "int32")
        body = C.substitute(loop.body, {loop.loop_var: outer * MAX_LANES + inner})
        vec = tirx.For(inner, 0, MAX_LANES, tirx.ForKind.VECTORIZED, body)
        return tirx.For(outer, 0, extent // MAX_LANES, tirx.ForKind.SERIAL, vec)

    @C.prim_func_pass("metal.LimitVectorWidth")
    def limit_vector_width(func: Any, mod: Any, ctx: Any) -> Any:
        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, split)))

    return limit_vector_width
