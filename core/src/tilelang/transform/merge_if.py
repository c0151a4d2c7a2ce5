"""IfStmtBinding and MergeIfStmt: conditions evaluated once, then consecutive ``if`` statements on one condition merged.

`IfStmtBinding` gives every ``if`` whose condition reads memory a ``Bind`` of the condition right before it (the
condition is evaluated once, before the body runs) and splits an ``if`` over several statements into one ``if``
per statement on that bound condition. `MergeIfStmt` merges consecutive ``if`` statements without ``else`` whose
conditions are structurally equal, unless the first one's body writes a buffer the condition reads (the
second test would see the new value). Together they let later passes treat each statement's guard on its own
without changing how often, or on which values, a condition is evaluated.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C


def _reads(expr: Any) -> set[Any]:
    return {ld.source for ld in C.collect(expr, tvm.ir.TensorLoad)}


def _writes(stmt: Any) -> set[Any]:
    return {st.buffer for st in C.collect(stmt, tirx.BufferStore)}


def IfStmtBinding(target: Any = None) -> tvm.transform.Pass:
    """Bind memory-reading ``if`` conditions and split multi-statement bodies (see the module docstring)."""

    @C.prim_func_pass("tl.IfStmtBinding")
    def bind_ifs(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def on_if(s: Any, mutator: Any) -> Any:
            s = mutator.default_mutate(s)
            if s.else_case is not None:
                return s
            body = list(s.then_case.seq) if isinstance(s.then_case, tirx.SeqStmt) else [s.then_case]
            if len(body) < 2 or any(isinstance(b, (tirx.Bind, tirx.AllocBuffer, tirx.DeclBuffer)) for b in body):
                return s
            prefix = []
            cond = s.condition
            if _reads(cond):
                var = tirx.Var("if_cond", str(cond.ty.dtype))
                prefix.append(tirx.Bind(var, cond))
                cond = var
            return C.seq([*prefix, *[tirx.IfThenElse(cond, b, None) for b in body]])

        body = tvm_ffi.structural_mutate(func.body, [(tirx.IfThenElse, on_if)])
        return func if body.same_as(func.body) else C.with_body(func, _flatten(body))

    return bind_ifs


def _flatten(body: Any) -> Any:
    return tvm_ffi.structural_map(body, (tirx.SeqStmt, lambda s: C.seq(s.seq)))


def MergeIfStmt(target: Any = None) -> tvm.transform.Pass:
    """Merge consecutive ``if`` statements on one condition (see the module docstring)."""

    @C.prim_func_pass("tl.MergeIfStmt")
    def merge(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def on_seq(seq: Any, mutator: Any) -> Any:
            seq = mutator.default_mutate(seq)
            out: list[Any] = []
            changed = False
            for stmt in seq.seq:
                prev = out[-1] if out else None
                if (isinstance(stmt, tirx.IfThenElse) and isinstance(prev, tirx.IfThenElse)
                        and stmt.else_case is None and prev.else_case is None
                        and tvm_ffi.structural_equal(prev.condition, stmt.condition)
                        and not (_reads(prev.condition) & _writes(prev.then_case))):
                    out[-1] = tirx.IfThenElse(prev.condition, C.seq([prev.then_case, stmt.then_case]), None)
                    changed = True
                else:
                    out.append(stmt)
            return C.seq(out) if changed else seq

        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, on_seq)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return merge
