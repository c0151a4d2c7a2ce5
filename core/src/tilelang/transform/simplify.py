"""LetInline and Simplify: the reference's expression clean-up passes, with `simplify_prim_func` /
`apply_simplify` to run them on a kernel a function returns.

`LetInline` replaces each ``Bind`` (``x = expr`` in a kernel) by its value in the statements after it and drops
it, so later passes and readers see the expression itself. A binding stays when inlining could change what the
program computes: its value calls an impure intrinsic, or reads a buffer that a later statement of its scope may
write (a store to it, or any tile-op / intrinsic call), or its variable sizes a buffer allocated later.

`Simplify` runs TVM's statement simplifier; with ``simplify_arguments=True`` it also drops kernel parameters
nothing uses (neither the body nor another parameter's shape), as the reference does for generated kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["LetInline", "Simplify", "apply_simplify", "simplify_prim_func"]


def _effect(call: Any) -> int:
    op = call.op
    if not isinstance(op, tvm.ir.Op):
        return int(tirx.CallEffectKind.Opaque.value)
    kind = op.get_attr("TCallEffectKind")
    return int(tirx.CallEffectKind.Opaque.value) if kind is None else int(getattr(kind, "value", kind))


def _inlinable(bind: Any, rest: list[Any]) -> bool:
    value = bind.value
    calls = C.collect(value, tvm.ir.Call)
    if any(_effect(c) > int(tirx.CallEffectKind.ReadState.value) for c in calls):
        return False
    tail = C.seq(rest) if rest else tirx.Evaluate(0)
    allocs = C.allocations(tail)
    if any(C.uses_var(a.buffer.ty, [bind.var]) for a in allocs):
        return False
    reads = {ld.source for ld in C.collect(value, tvm.ir.TensorLoad)}
    reads_state = any(_effect(c) == int(tirx.CallEffectKind.ReadState.value) for c in calls)
    if not reads and not reads_state:
        return True
    if reads & {st.buffer for st in C.collect(tail, tirx.BufferStore)}:
        return False
    # a tile op or intrinsic may write through its regions / pointers
    return not [e for e in C.collect(tail, tirx.Evaluate) if isinstance(e.value, tvm.ir.Call)]


def _inline_seq(seq: Any, mutator: Any) -> Any:
    seq = mutator.default_mutate(seq)
    stmts = list(seq.seq)
    out: list[Any] = []
    changed = False
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        rest = stmts[i + 1:]
        if isinstance(stmt, tirx.Bind) and _inlinable(stmt, rest):
            stmts = stmts[:i + 1] + [C.substitute(s, {stmt.var: stmt.value}) for s in rest]
            changed = True
        else:
            out.append(stmt)
        i += 1
    return C.seq(out) if changed else seq


def LetInline(target: Any = None) -> tvm.transform.Pass:
    """Inline ``Bind`` values into the statements after them (see the module docstring)."""

    @C.prim_func_pass("tl.LetInline")
    def let_inline(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, _inline_seq)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return let_inline


def _drop_unused_params(func: tirx.PrimFunc) -> tirx.PrimFunc:
    params = list(func.params)
    keep = [p for p in params if C.uses_var(func.body, [p])]
    # a scalar parameter that sizes a kept buffer parameter stays too
    keep_set = set(keep)
    for p in params:
        if p not in keep_set and any(C.uses_var(q.ty, [p]) for q in keep if isinstance(q.ty, tirx.BufferType)):
            keep_set.add(p)
    kept = [p for p in params if p in keep_set]
    if len(kept) == len(params):
        return func
    return tirx.PrimFunc(kept, func.body, func.ret_type, func.attrs)


def Simplify(simplify_arguments: bool = False) -> tvm.transform.Pass:
    """TVM's statement simplifier; ``simplify_arguments`` also drops parameters nothing uses."""
    simplify = tirx.transform.StmtSimplify()

    @tvm.transform.module_pass(opt_level=0, name="tl.Simplify")
    def run(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
        mod = simplify(mod)
        if not simplify_arguments:
            return mod
        funcs = {gv: _drop_unused_params(f) if isinstance(f, tirx.PrimFunc) else f for gv, f in mod.functions.items()}
        return tvm.IRModule(funcs, attrs=mod.attrs)

    return run


def _simplify(stmt: Any, inline_let: bool = False) -> tirx.PrimFunc:
    if isinstance(stmt, tirx.PrimFunc):
        mod = tvm.IRModule({"main": stmt})
    elif isinstance(stmt, tvm.IRModule):
        mod = stmt
    else:
        raise ValueError(f"apply_simplify expects a PrimFunc or an IRModule, got {type(stmt).__name__}")
    if inline_let:
        mod = LetInline()(mod)
    mod = Simplify(simplify_arguments=True)(mod)
    funcs = list(mod.functions.values())
    if len(funcs) != 1:
        raise ValueError(f"apply_simplify expects a module with one function, got {len(funcs)}")
    return funcs[0]


def simplify_prim_func(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a function returning a PrimFunc (or one-function IRModule) so that it returns it simplified."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _simplify(func(*args, **kwargs))

    wrapper.__name__ = getattr(func, "__name__", "wrapper")
    wrapper.__doc__ = func.__doc__
    wrapper.__wrapped__ = func  # type: ignore[attr-defined]
    return wrapper


def apply_simplify(stmt: Any, inline_let: bool = False) -> Any:
    """`stmt` (PrimFunc or one-function IRModule) simplified, as a PrimFunc; ``inline_let`` runs LetInline first."""
    return _simplify(stmt, inline_let)
