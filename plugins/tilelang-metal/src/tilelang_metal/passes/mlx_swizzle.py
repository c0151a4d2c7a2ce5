"""``metal.mlx_swizzle`` (`MlxSwizzle`): keep ``T.use_swizzle(panel, order="mlx")`` for the Metal codegen.

With ``order="mlx"`` the kernel maps its blocks itself, MLX style: logical tile ``(bx // panel, by * panel +
bx % panel)`` of a grid launched ``panel`` times wider and ``panel`` times shorter. The annotation asks the
backend to compute that mapping once per threadgroup instead of in every address. This pass (``pre_layout``,
before core's block rasterizer would read the annotation) replaces the ``tl.swizzle`` attribute by the marker
statement ``tl_metal_mlx_swizzle(panel)`` (an extern call, so TVM's passes keep it where they drop unknown
attributes); `tilelang_metal.passes.mlx_block_indices` rewrites the kernel in logical block indices once it is a
device function, and the codegen (`tilelang_metal.kernel_source`) replaces the marker's line.
"""

from __future__ import annotations

from typing import Any

import tvm

from tilelang.backend.sdk import SWIZZLE_ATTR

MLX_MARKER = "tl_metal_mlx_swizzle"


def MlxSwizzle(target: Any = None) -> tvm.transform.Pass:
    """Replace ``tl.swizzle`` attributes of order ``"mlx"`` by the ``tl_metal_mlx_swizzle(panel)`` marker."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def on_attr(s: Any) -> Any:
        if str(s.attr_key) != SWIZZLE_ATTR or not isinstance(s.node, tvm.ir.StringImm) or s.node.value != "mlx":
            return s
        panel = C.as_int(s.value)
        if panel is None or panel < 1:
            return s.body
        return C.seq([tirx.Evaluate(tirx.call_extern("void", MLX_MARKER, tirx.const(panel, "int32"))), s.body])

    @C.prim_func_pass("metal.mlx_swizzle")
    def mlx_swizzle(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_map(func.body, (tirx.AttrStmt, on_attr))
        return func if body.same_as(func.body) else C.with_body(func, body)

    return mlx_swizzle


def marker_panel(node: Any) -> int | None:
    """The panel of the first ``tl_metal_mlx_swizzle`` marker in `node`, or None."""
    from tilelang.transform import utils as C

    found = C.collect(node, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == "tirx.call_extern"
                      and str(c.args[0].value) == MLX_MARKER)
    return C.as_int(found[0].args[1]) if found else None
