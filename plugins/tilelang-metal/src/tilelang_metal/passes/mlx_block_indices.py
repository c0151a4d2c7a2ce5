"""``metal.mlx_block_indices`` (`MlxBlockIndices`): an MLX-swizzled kernel in logical block indices.

The marker ``tl_metal_mlx_swizzle(p)`` (`tilelang_metal.passes.mlx_swizzle`) says the kernel reads its tile as
``(bx // p, by * p + bx % p)`` from the physical block index ``(bx, by)``. On the device function
(``device_module``, when no analysis of the physical launch remains) this pass writes every use of ``bx`` /
``by`` in logical indices ``X, Y``
(``bx = X * p + Y % p``, ``by = Y // p``, exact) and simplifies with ``X < ceil(gx / p)``, ``Y < gy * p``, so the
kernel's own mapping folds away (``bx // p`` is ``X``). ``X`` and ``Y`` are then spelled with the block-index
variables again: the kernel's ``blockIdx`` now means the logical index, which the codegen declares once from
``__physical_blockIdx`` (`tilelang_metal.kernel_source`, which also replaces the marker statement). A kernel
without a 2-D grid has nothing to map: its marker is dropped.
"""

from __future__ import annotations

from typing import Any

import tvm

from tilelang_metal.passes.mlx_swizzle import MLX_MARKER, marker_panel


def _drop_marker(s: Any) -> Any:
    from tvm import tirx

    call = s.value
    if isinstance(call, tvm.ir.Call) and call.args and str(getattr(call.args[0], "value", "")) == MLX_MARKER:
        return tirx.Evaluate(tirx.const(0, "int32"))
    return s


def MlxBlockIndices(target: Any = None) -> tvm.transform.Pass:
    """Rewrite marked device functions in logical block indices (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    @C.prim_func_pass("metal.mlx_block_indices")
    def mlx_block_indices(func: Any, mod: Any, ctx: Any) -> Any:
        panel = marker_panel(func.body)
        ext = C.launch_extents(func)
        if panel is None:
            return func
        if "blockIdx.x" not in ext or "blockIdx.y" not in ext:  # nothing to map: drop the marker
            return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.Evaluate, _drop_marker)))
        (bx, gx), (by, gy) = ext["blockIdx.x"], ext["blockIdx.y"]
        lx, ly = tirx.Var("mlx_x", "int32"), tirx.Var("mlx_y", "int32")
        ana = tvm.sym.Analyzer()
        ana.bind(lx, tvm.ir.Range.from_min_extent(0, tirx.floordiv(gx + panel - 1, panel)))
        ana.bind(ly, tvm.ir.Range.from_min_extent(0, gy * panel))
        to_logical = {bx: lx * panel + tirx.floormod(ly, panel), by: tirx.floordiv(ly, panel)}
        back = {lx: bx, ly: by}

        def simplified(e: Any) -> Any:
            return ana.simplify(e) if C.uses_var(e, (lx, ly)) else e

        def on_load(n: Any) -> Any:
            if getattr(n, "predicate", None) is not None:
                return n
            return tirx.BufferLoad(n.source, [simplified(i) for i in n.indices])

        def on_store(n: Any) -> Any:
            if getattr(n, "predicate", None) is not None:
                return n
            return tirx.BufferStore(n.buffer, simplified(n.value), [simplified(i) for i in n.indices])

        def rewrite(stmt: Any) -> Any:
            # the launch attributes bind the block vars themselves: descend into them, rewrite what they enclose
            if isinstance(stmt, tirx.AttrStmt) and str(stmt.attr_key) == "thread_extent":
                return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, rewrite(stmt.body), stmt.span)
            if isinstance(stmt, tirx.SeqStmt):
                return C.seq([rewrite(s) for s in stmt.seq])
            if not C.uses_var(stmt, (bx, by)):
                return stmt
            body = C.substitute(stmt, to_logical)
            body = tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
            return C.substitute(body, back)

        return C.with_body(func, rewrite(func.body))

    return mlx_block_indices
