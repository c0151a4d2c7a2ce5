"""UnrollBudget: ``T.unroll`` loops that TVM's UnrollLoop cannot or should not copy out stay loops.

TVM's UnrollLoop copies the body of every unrolled loop once per iteration. A persistent kernel's
``for tile in T.unroll(1024):`` over a warp role's whole body (the reference's CLC-scheduled tcgen05 GEMM)
became hundreds of thousands of statements, and the simplifier after it never finished; a trip count that is not
a constant cannot be copied out at all. Such loops run as ordinary loops instead (the device compiler may still
unroll them), as the reference TileLang leaves a ``T.unroll`` without ``explicit=True`` to the device compiler.
``T.unroll(..., explicit=True)`` is always copied out (a trip count that is not a constant is then an error
naming the loop).
"""

from __future__ import annotations

from typing import Any

from tilelang.transform import utils as C

# statements one unrolled loop nest may expand to; a kernel's own unrolled fragments loops stay far below
UNROLL_BUDGET = 4096
EXPLICIT_ANN = "pragma_unroll_explicit"
# on the loops a program writes with T.unroll: the budget applies to them only (a backend's own unrolled loops,
# e.g. over the private arrays of a WebGPU thread, must be copied out whatever their size)
USER_ANN = "unroll_budget"


def _size(stmt: Any) -> int:
    """Statements `stmt` expands to once its constant unrolled loops are copied out."""
    from tvm import tirx

    if isinstance(stmt, tirx.SeqStmt):
        return sum(_size(s) for s in stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return 1 + _size(stmt.then_case) + (_size(stmt.else_case) if stmt.else_case is not None else 0)
    body = getattr(stmt, "body", None)
    inner = _size(body) if isinstance(body, tirx.Stmt) else 0
    if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.UNROLLED:
        extent = C.as_int(stmt.extent)
        if extent is not None:
            return 1 + max(extent, 0) * inner
    return 1 + inner


def UnrollBudget(target: Any = None) -> Any:
    """Turn the unrolled loops TVM's UnrollLoop would choke on (trip count not a constant, or a program's
    ``T.unroll`` of more than `UNROLL_BUDGET` statements once copied out) into serial loops; explicit ones it must
    copy are left alone."""
    import tvm_ffi
    from tvm import tirx

    @C.prim_func_pass("tl.UnrollBudget")
    def budget(func: Any, mod: Any, ctx: Any) -> Any:
        def on_for(loop: Any, mutator: Any) -> Any:
            mutated = mutator.default_mutate(loop)
            if mutated.kind != tirx.ForKind.UNROLLED:
                return mutated
            extent = C.as_int(mutated.extent)
            if bool(mutated.annotations.get(EXPLICIT_ANN, False)):
                if extent is None:
                    raise C.lowering_error_at(func, getattr(loop, "span", None),
                                              f"T.unroll(..., explicit=True) over `{mutated.loop_var}` needs a "
                                              f"constant trip count, got {mutated.extent}")
                return mutated
            if extent is not None and (USER_ANN not in mutated.annotations or _size(mutated) <= UNROLL_BUDGET):
                return mutated
            return tirx.For(mutated.loop_var, mutated.min, mutated.extent, tirx.ForKind.SERIAL, mutated.body,
                            annotations=mutated.annotations)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return budget
