"""``cpu.warp_groups``: warp-specialised scopes (``with T.ws(i):``) as the CPU runs them.

On a GPU, ``T.ws(i)`` is ``if tx // 128 == i`` around its body: the tile operators inside are collective over
that warpgroup's threads. The CPU lowers tile operators for the whole block (no thread index in their loops),
so wrapped in the thread loops the scope's body would run once per thread of the group (a GEMM accumulating
128 times). Here each scope's guard moves down to the statements that are per-thread (they read a thread index
or a thread's own ``local`` buffer); the rest, block-collective work, runs once, in program order. The roles'
barriers (``T.mbarrier_*``) then have nothing to order (`tilelang_cpu.intrinsics`).
"""

from __future__ import annotations

from typing import Any

WARP_GROUP_ATTR = "tl.cuda.warp_group"  # the CUDA dialect's T.ws scope marker


def _scope_body(stmt: Any) -> Any | None:
    """The body of a ``T.ws`` scope ``if cond: attr(tl.cuda.warp_group) body``, else None."""
    from tvm import tirx

    if not isinstance(stmt, tirx.IfThenElse) or stmt.else_case is not None:
        return None
    inner = stmt.then_case
    if isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == WARP_GROUP_ATTR:
        return inner.body
    return None


def push_guard(stmt: Any, cond: Any, tvars: list[Any], per_thread: set[Any]) -> Any:
    """`stmt` under guard `cond`, the guard kept only around its per-thread statements."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    def threaded(s: Any) -> bool:
        if C.uses_var(s, tvars):
            return True
        touched = {ld.source for ld in C.collect(s, tvm.ir.TensorLoad)}
        touched |= {st.buffer for st in C.collect(s, tirx.BufferStore)}
        return bool(touched & per_thread)

    if not threaded(stmt):
        return stmt
    if isinstance(stmt, tirx.SeqStmt):
        out = []
        items = list(stmt.seq)
        for i, child in enumerate(items):
            if isinstance(child, tirx.Bind) and threaded(child):  # a per-thread value: the rest stays guarded
                out.append(tirx.IfThenElse(cond, C.seq(items[i:]), None))
                break
            out.append(push_guard(child, cond, tvars, per_thread))
        return C.seq(out)
    if isinstance(stmt, tirx.For) and not (C.uses_var(stmt.min, tvars) or C.uses_var(stmt.extent, tvars)):
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind,
                        push_guard(stmt.body, cond, tvars, per_thread), stmt.thread_binding, stmt.annotations)
    return tirx.IfThenElse(cond, stmt, None)


def WarpGroups(target: Any = None) -> Any:
    """The ``cpu.warp_groups`` pass (module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.backend.sdk import per_thread_buffers
    from tilelang.transform import utils as C

    @C.prim_func_pass("cpu.warp_groups")
    def warp_groups(func: Any, mod: Any, ctx: Any) -> Any:
        if not C.collect(func.body, tirx.AttrStmt, lambda s: str(s.attr_key) == WARP_GROUP_ATTR):
            return func
        tvars = [s.node.var for s in C.collect(func.body, tirx.AttrStmt)
                 if str(s.attr_key) == "thread_extent" and str(s.node.thread_tag).startswith("threadIdx")]
        per_thread = per_thread_buffers(func.body)

        def on_if(stmt: Any, mutator: Any) -> Any:
            stmt = mutator.default_mutate(stmt)
            body = _scope_body(stmt)
            return stmt if body is None else push_guard(body, stmt.condition, tvars, per_thread)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.IfThenElse, on_if)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return warp_groups
