"""MarkHostMetalContext: mark the host's kernel launches so a C host can run them on PyTorch's MPS stream.

Inside the packed function's ``compute_scope``, every lowered packed call (``tvm_call_packed_lowered``: the
launch of a device kernel) is wrapped in ``AttrStmt("metal_context")``. A host codegen that sees the mark fetches
the current MPS command buffer from ``torch::mps`` and hands it to the TVM runtime before the launch, so the
kernel is ordered with PyTorch's own Metal work. tilelang-metal launches kernels through its own MPS launcher
(`tilelang_metal.execution_backend`), so its pipeline does not run this pass; it is here for C-host builds.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MarkHostMetalContext"]

CONTEXT_ATTR = "metal_context"


def _is_packed_launch(stmt: Any) -> bool:
    import tvm

    value = stmt.value
    return (isinstance(value, tvm.ir.Call) and isinstance(value.op, tvm.ir.Op)
            and value.op.name == "tirx.tvm_call_packed_lowered")


def mark_launches(body: Any) -> Any:
    """`body` with each packed launch inside a ``compute_scope`` wrapped in ``AttrStmt("metal_context")``."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def on_attr(stmt: Any) -> Any:
        if str(stmt.attr_key) != "compute_scope":
            return stmt
        marked = [a.body for a in C.collect(stmt.body, tirx.AttrStmt, lambda a: str(a.attr_key) == CONTEXT_ATTR)]

        def wrap(ev: Any) -> Any:
            if not _is_packed_launch(ev) or any(ev.same_as(m) for m in marked):  # marked by an earlier run
                return ev
            return tirx.AttrStmt(tirx.const(0, "int32"), CONTEXT_ATTR, tvm.ir.StringImm(""), ev)

        inner = tvm_ffi.structural_map(stmt.body, (tirx.Evaluate, wrap))
        return stmt if inner.same_as(stmt.body) else tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, inner)

    return tvm_ffi.structural_map(body, (tirx.AttrStmt, on_attr))


def MarkHostMetalContext() -> Any:
    """The pass marking host-side kernel launches for MPS synchronisation (see the module docstring)."""
    from tilelang.transform import utils as C

    @C.prim_func_pass("tl.metal.MarkHostMetalContext")
    def mark_host_metal_context(func: Any, mod: Any, ctx: Any) -> Any:
        body = mark_launches(func.body)
        return func if body.same_as(func.body) else C.with_body(func, body)

    return mark_host_metal_context
