"""`LowerLoopExits` (CPU, LLVM only): ``break`` / ``continue`` in device loops as per-iteration flags.

TVM's LLVM codegen has no ``Break`` / ``Continue`` statements (its C codegen prints them). Here a loop that
holds one gets two ``local`` flags: ``continue`` sets the iteration flag, ``break`` both; every statement after
one that may set them runs only while they are clear, the iteration flag is cleared at the start of each
iteration, and the loop body is skipped once the break flag is set (the remaining iterations do nothing). A
``while`` loop also stops at the break flag.
"""

from __future__ import annotations

from typing import Any


def _exits(stmt: Any) -> bool:
    """Whether `stmt` holds a Break or Continue of its own loop (not of a loop nested in it)."""
    from tvm import tirx

    if isinstance(stmt, (tirx.Break, tirx.Continue)):
        return True
    if isinstance(stmt, (tirx.For, tirx.While)):
        return False
    if isinstance(stmt, tirx.SeqStmt):
        return any(_exits(s) for s in stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return _exits(stmt.then_case) or (stmt.else_case is not None and _exits(stmt.else_case))
    if isinstance(stmt, tirx.AttrStmt):
        return _exits(stmt.body)
    return False


def _rewrite_body(body: Any, brk: Any, cont: Any) -> Any:
    """`body` with its own Break / Continue replaced by flag stores and later statements guarded."""
    from tvm import tirx

    from tilelang.transform import utils as C

    one = tirx.const(1, "int32")
    clear = tirx.And(tirx.BufferLoad(brk, [0]) == 0, tirx.BufferLoad(cont, [0]) == 0)

    def go(stmt: Any) -> Any:
        if isinstance(stmt, tirx.Break):
            return C.seq([tirx.BufferStore(brk, one, [0]), tirx.BufferStore(cont, one, [0])])
        if isinstance(stmt, tirx.Continue):
            return tirx.BufferStore(cont, one, [0])
        if not _exits(stmt):
            return stmt
        if isinstance(stmt, tirx.SeqStmt):
            out: list[Any] = []
            guarded_from = None
            for i, child in enumerate(stmt.seq):
                if guarded_from is not None:
                    break
                out.append(go(child))
                if _exits(child):
                    guarded_from = i + 1
            if guarded_from is not None and guarded_from < len(stmt.seq):
                rest = go(C.seq(list(stmt.seq[guarded_from:])))
                out.append(tirx.IfThenElse(clear, rest, None))
            return C.seq(out)
        if isinstance(stmt, tirx.IfThenElse):
            return tirx.IfThenElse(stmt.condition, go(stmt.then_case),
                                   go(stmt.else_case) if stmt.else_case is not None else None)
        if isinstance(stmt, tirx.AttrStmt):
            return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, go(stmt.body))
        return stmt

    return go(body)


def lower_loop_exits(body: Any) -> Any:
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def flags() -> tuple[Any, Any]:
        return (tirx.decl_buffer((1,), "int32", name="loop_break", scope="local"),
                tirx.decl_buffer((1,), "int32", name="loop_continue", scope="local"))

    def on_for(loop: Any, mutator: Any) -> Any:
        loop = mutator.default_mutate(loop)
        if not _exits(loop.body):
            return loop
        brk, cont = flags()
        zero = tirx.const(0, "int32")
        inner = C.seq([tirx.BufferStore(cont, zero, [0]), _rewrite_body(loop.body, brk, cont)])
        guarded = tirx.IfThenElse(tirx.BufferLoad(brk, [0]) == 0, inner, None)
        kind = tirx.ForKind.SERIAL if loop.kind != tirx.ForKind.UNROLLED else loop.kind
        new = tirx.For(loop.loop_var, loop.min, loop.extent, kind, guarded, loop.thread_binding, loop.annotations)
        return C.seq([tirx.AllocBuffer(brk), tirx.AllocBuffer(cont), tirx.BufferStore(brk, zero, [0]), new])

    def on_while(loop: Any, mutator: Any) -> Any:
        loop = mutator.default_mutate(loop)
        if not _exits(loop.body):
            return loop
        brk, cont = flags()
        zero = tirx.const(0, "int32")
        cond = tirx.And(tirx.BufferLoad(brk, [0]) == 0, loop.condition)
        inner = C.seq([tirx.BufferStore(cont, zero, [0]), _rewrite_body(loop.body, brk, cont)])
        return C.seq([tirx.AllocBuffer(brk), tirx.AllocBuffer(cont), tirx.BufferStore(brk, zero, [0]),
                      tirx.While(cond, inner)])

    return tvm_ffi.structural_mutate(body, [(tirx.For, on_for), (tirx.While, on_while)])


def LowerLoopExits(target: Any = None) -> Any:
    """Replace Break / Continue by flags (see the module docstring)."""
    from tvm import tirx

    from tilelang.transform import utils as C

    @C.prim_func_pass("cpu.lower_loop_exits")
    def lower(func: Any, mod: Any, ctx: Any) -> Any:
        if not C.collect(func.body, tirx.Break) and not C.collect(func.body, tirx.Continue):
            return func
        return C.with_body(func, lower_loop_exits(func.body))

    return lower
