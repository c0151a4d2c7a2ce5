"""IR helpers of the checkers: statement traversal with an explicit loop stack, buffer accesses, loop kinds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tvm import tirx

#: For annotations that make a loop a software pipeline (``T.Pipelined``), ours and the reference's.
PIPELINE_KEYS = ("tl.pipeline_stages", "tl.pipeline_order", "tl.pipeline_stage", "num_stages",
                 "tl_pipeline_order", "tl_pipeline_stage", "tl_pipeline_group")


def child_stmts(stmt: Any) -> list[Any]:
    """The statements directly nested in `stmt`, in order."""
    if isinstance(stmt, tirx.SeqStmt):
        return list(stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return [stmt.then_case] + ([stmt.else_case] if stmt.else_case is not None else [])
    body = getattr(stmt, "body", None)
    return [body] if isinstance(body, tirx.Stmt) else []


def is_parallel(loop: Any) -> bool:
    return isinstance(loop, tirx.For) and loop.kind == tirx.ForKind.PARALLEL


def is_pipelined(loop: Any) -> bool:
    ann = loop.annotations or {}
    return any(k in ann for k in PIPELINE_KEYS)


def scope_of(buffer: Any) -> str:
    """The storage scope of a buffer var."""
    ty = getattr(buffer, "ty", None)
    scope = getattr(ty, "storage_scope", None)
    if scope is None and callable(getattr(buffer, "scope", None)):
        scope = buffer.scope()
    return str(scope) if scope else "global"


def buffer_name(buffer: Any) -> str:
    return str(getattr(buffer, "name", None) or getattr(buffer, "name_hint", buffer))


def accesses(node: Any) -> Iterator[tuple[Any, list[Any]]]:
    """``(buffer, indices)`` of every load and store in `node` (a statement or expression), loads included
    inside indices."""
    import tvm
    import tvm_ffi

    found: list[tuple[Any, list[Any]]] = []

    def on_store(s: Any) -> None:
        found.append((s.buffer, list(s.indices)))

    def on_load(e: Any) -> None:
        found.append((e.source, list(e.indices)))

    tvm_ffi.structural_walk(node, [(tirx.BufferStore, on_store), (tvm.ir.TensorLoad, on_load)], order="pre")
    return iter(found)


def uses(expr: Any, var: Any) -> bool:
    """Whether `var` occurs in `expr`."""
    import tvm
    import tvm_ffi

    hit = []

    def on_var(v: Any) -> None:
        if v.same_as(var):
            hit.append(v)

    tvm_ffi.structural_walk(expr, [(tvm.ir.Var, on_var)], order="pre")
    return bool(hit)


def tile_op_name(stmt: Any) -> str | None:
    """The tile operator an ``Evaluate`` statement calls (``tl.copy``, ...), or None."""
    if not isinstance(stmt, tirx.Evaluate):
        return None
    op = getattr(stmt.value, "op", None)
    name = str(getattr(op, "name", "")) if op is not None else ""
    if not name.startswith("tl."):
        return None
    from tilelang.ir.ops import TILE_OPS

    if name in TILE_OPS or name.startswith("tl.tileop."):
        return name
    try:  # the reference marks tile operators with the TLOpBuilder attribute
        return name if op.get_attr("TLOpBuilder") is not None else None
    except Exception:
        return None


def prim_funcs(mod: Any) -> list[Any]:
    import tvm

    if isinstance(mod, tirx.PrimFunc):
        return [mod]
    if isinstance(mod, tvm.IRModule):
        return [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    raise TypeError(f"expected a PrimFunc or an IRModule, got {type(mod).__name__}")


def checker_pass(name: str, check: Any) -> Any:
    """A prim_func pass named `name` that runs ``check(func)`` and returns the function unchanged."""

    def run(func: Any, mod: Any, ctx: Any) -> Any:
        check(func)
        return func

    return tirx.transform.prim_func_pass(run, opt_level=0, name=name)
