"""LowerIntrinsics: replace every scalar intrinsic call (``tl.atomic_add_elem_op``, ``tl.any_sync``,
``tl.__exp``, ``tl.print``, ...: `tilelang.ir.ops.INTRINSICS`) by what its registered implementation emits.

Runs right after LowerTileOps; backend passes at ``post_tile_lowering`` see the lowered result. For each call
(outermost first: an implementation sees its arguments as the user wrote them) the pass builds a
`tilelang.tileop.intrinsics.IntrinsicContext` and asks the tile-op registry for the highest-priority
implementation of that name for the target (core's generic ones are registered for every target with priority
0). An implementation returns the replacement expression, or a `tilelang.tileop.intrinsics.Lowered` whose
statements are spliced in front of the statement holding the call (in evaluation order; flat ``Bind``
statements keep their scope). A call no implementation serves is a `LoweringError` naming the construct, the
target and what to use instead.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.tile_ops import ANY_TARGET, register_lazy_tile_op_impls, resolve_tile_op_impl
from tilelang.errors import LoweringError, NoImplementationError, TileLangError
from tilelang.ir.ops import INTRINSICS
from tilelang.transform import utils as C

register_lazy_tile_op_impls(ANY_TARGET, "tilelang.tileop.intrinsics:GENERIC_INTRINSICS")


def _is_intrinsic(node: Any) -> bool:
    return isinstance(node, tvm.ir.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name in INTRINSICS


def _flatten(body: Any) -> Any:
    """Splice nested SeqStmts into their parent sequence (a ``Bind`` scopes over the rest of its own sequence)."""

    def on_seq(s: Any) -> Any:
        if not any(isinstance(c, tirx.SeqStmt) for c in s.seq):
            return s
        return C.seq(s.seq)

    return tvm_ffi.structural_map(body, (tirx.SeqStmt, on_seq))


def LowerIntrinsics(target: Any = None) -> tvm.transform.Pass:
    """Lower intrinsic calls through the tile-operator registry (see the module docstring)."""

    @C.prim_func_pass("tl.LowerIntrinsics")
    def lower_intrinsics(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        from tilelang.tileop.intrinsics import IntrinsicContext, Lowered, hint_for

        if not C.collect(func.body, tvm.ir.Call, _is_intrinsic):
            return func
        tgt = target if target is not None else func.attrs.get("target") if func.attrs else None
        if tgt is None:
            raise C.lowering_error(func, "LowerIntrinsics needs a target")
        options = C.pipeline_options(tgt)
        ext = C.launch_extents(func)
        tvars = [ext[t][0] for t in C.THREAD_TAGS if t in ext]
        textents = [C.as_int(ext[t][1]) or 1 for t in C.THREAD_TAGS if t in ext]
        bvars = [ext[t][0] for t in C.BLOCK_TAGS if t in ext]

        def lower_call(call: Any, in_statement: bool) -> Any:
            ictx = IntrinsicContext(call.op.name, call, tgt, options, func, tvars, textents, in_statement, bvars)
            try:
                impl = resolve_tile_op_impl(call.op.name, tgt, ictx)
            except NoImplementationError:
                raise ictx.error("not supported by this backend", hint_for(call.op.name)) from None
            try:
                out = impl.lower(ictx)
            except TileLangError as exc:
                if isinstance(exc, LoweringError):
                    raise
                raise ictx.error(str(exc)) from None
            return out if isinstance(out, Lowered) else Lowered(out)

        def expr(e: Any, prefix: list[Any]) -> Any:
            """`e` with its intrinsics lowered (outermost first, so an implementation sees its arguments as
            written, e.g. the ``T.access_ptr`` of ``ptx_cp_async``); statements they need go to `prefix`."""

            def on_call(c: Any, mutator: Any) -> Any:
                if not _is_intrinsic(c):
                    return mutator.default_mutate(c)
                lowered = lower_call(c, False)
                for st in lowered.prefix:
                    prefix.append(statement(st))
                if lowered.value is None:
                    raise C.lowering_error(func, f"{c.op.name} has no value here; call it as a statement")
                return expr(lowered.value, prefix)

            return tvm_ffi.structural_mutate(e, [(tvm.ir.Call, on_call)])

        def with_prefix(prefix: list[Any], stmt: Any) -> Any:
            return C.seq([*prefix, stmt]) if prefix else stmt

        def on_evaluate(ev: Any, mutator: Any) -> Any:
            value = ev.value
            if _is_intrinsic(value):
                lowered = lower_call(value, True)
                prefix = [statement(st) for st in lowered.prefix]
                if lowered.value is not None:
                    prefix.append(statement(tirx.Evaluate(lowered.value)))
                return C.seq(prefix)
            prefix = []
            new = expr(value, prefix)
            return with_prefix(prefix, ev if new.same_as(value) else tirx.Evaluate(new))

        def on_store(st: Any, mutator: Any) -> Any:
            prefix: list[Any] = []
            indices = [expr(i, prefix) for i in st.indices]
            value = expr(st.value, prefix)
            if not prefix and value.same_as(st.value) and all(a.same_as(b) for a, b in zip(indices, st.indices)):
                return st
            return with_prefix(prefix, tirx.BufferStore(st.buffer, value, indices))

        def on_bind(b: Any, mutator: Any) -> Any:
            prefix: list[Any] = []
            value = expr(b.value, prefix)
            return with_prefix(prefix, b if value.same_as(b.value) else tirx.Bind(b.var, value))

        def on_if(s: Any, mutator: Any) -> Any:
            s = mutator.default_mutate(s)
            prefix: list[Any] = []
            cond = expr(s.condition, prefix)
            if cond.same_as(s.condition):
                return s
            return with_prefix(prefix, tirx.IfThenElse(cond, s.then_case, s.else_case))

        def on_assert(s: Any, mutator: Any) -> Any:
            prefix: list[Any] = []
            cond = expr(s.condition, prefix)
            if cond.same_as(s.condition):
                return s
            # apache-tvm 0.27's AssertStmt takes (condition, error kind, message parts), whatever its
            # Python wrapper names its parameters
            return with_prefix(prefix, tirx.AssertStmt(cond, s.error_kind, list(s.message_parts)))

        def on_while(s: Any, mutator: Any) -> Any:
            s = mutator.default_mutate(s)
            prefix: list[Any] = []
            cond = expr(s.condition, prefix)
            if prefix:
                raise C.lowering_error(func, "an intrinsic that needs statements of its own (an emulated atomic, "
                                             "vote or print) cannot be part of a while condition; compute it into "
                                             "a T.alloc_var before the loop and at the end of its body")
            return s if cond.same_as(s.condition) else tirx.While(cond, s.body)

        handlers = [(tirx.Evaluate, on_evaluate), (tirx.BufferStore, on_store), (tirx.Bind, on_bind),
                    (tirx.IfThenElse, on_if), (tirx.AssertStmt, on_assert), (tirx.While, on_while)]

        def statement(st: Any) -> Any:
            """`st` (an implementation's statement) with the intrinsics it still holds lowered."""
            return tvm_ffi.structural_mutate(st, handlers)

        body = statement(func.body)
        return C.with_body(func, _flatten(body))

    return lower_intrinsics
