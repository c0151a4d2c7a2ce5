"""``webgpu.split_wide_vectors`` (``post_storage``, before TVM vectorizes): WGSL vectors have 2 to 4 lanes; a
vectorized loop wider than 4 becomes a serial loop over 4-wide (or, when 4 does not divide it, 2-wide) vectorized
loops, or a serial loop.
"""

from __future__ import annotations

from typing import Any

from tilelang.transform import utils as C


def SplitWideVectors(target: Any = None) -> Any:
    """Vectorized loops of more than 4 lanes become serial loops over 4- or 2-lane ones (or serial)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        extent = getattr(loop.extent, "value", None)
        if loop.kind != tirx.ForKind.VECTORIZED or (extent is not None and extent <= 4):
            return loop
        width = next((w for w in (4, 2) if extent is not None and extent % w == 0), None)
        if width is None:
            return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
        outer = tirx.Var(f"{loop.loop_var.name}_o", loop.loop_var.ty.dtype)
        inner = tirx.Var(f"{loop.loop_var.name}_v", loop.loop_var.ty.dtype)
        index = loop.min + outer * width + inner
        body = tvm_ffi.structural_map(loop.body, (type(loop.loop_var), lambda v: index if v.same_as(loop.loop_var)
                                                                         else v))
        vec = tirx.For(inner, 0, width, tirx.ForKind.VECTORIZED, body)
        return tirx.For(outer, 0, extent // width, tirx.ForKind.SERIAL, vec)

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.split_wide_vectors")
    def split(func: Any, mod: Any, ctx: Any) -> Any:
        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return split
