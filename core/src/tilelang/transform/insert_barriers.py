"""InsertBarriers: put a block barrier between every conflicting pair of shared-memory accesses.

Tile operators and partitioned loops write shared tiles that other threads read next (a copy into ``A_shared``
followed by a gemm reading it; a fragment staged for a reduction). The pass runs TVM's ``ThreadSync``
analysis for ``"shared"`` and ``"shared.dyn"``, which inserts ``tvm_storage_sync("shared")`` exactly where a
read-after-write, write-after-read or write-after-write across threads needs one (also across loop
iterations). Targets without threads need none: their blocks run as one thread of control.

Barriers inside branches (pipeline option ``partial_barriers``, e.g. CUDA's named barriers): a branch whose
condition reads no memory -- on the thread index (warp roles: ``if tx < 128``, ``elif tx // 32 == 2``) or the
same for the whole block -- may hold barriers, and so may ``while`` loops whose condition does not use the thread
index. A barrier inside branches on the thread index synchronises only their threads: when these are a
contiguous, warp-aligned slice ``[begin, begin + count)`` of the block (`tilelang.transform.thread_range`) it
becomes ``tvm_storage_sync(scope, id, count)``, a named barrier (ids from 3 on, one per slice; 0 is
``__syncthreads``, 1 and 2 stay free as in the reference TileLang); inside a branch of one thread (``if tx == 64``,
a scheduler thread) none is needed, its accesses are in program order; otherwise lowering fails naming the branch.
Without the option (one barrier for the whole block, e.g. AMD's ``s_barrier``) only conditions every thread
evaluates alike may hold barriers: an ``if`` or a ``while`` on neither the thread index nor memory but the
threads' own variables that no thread writes from its index or from memory (the persistent loop ``while bx <
num_blocks`` of the reference's AMD flash attention). Otherwise, or for a branch that reads memory through
the thread index, TVM's rule stands: no barrier inside a thread-dependent condition. A condition reading a shared
tile is evaluated into a variable just before its ``if`` (TVM's analysis sees reads only in statements). A
``while`` body that holds a barrier ends with one (`_close_while_loops`: the analysis orders one trip only).

``tl.disable_thread_storage_sync`` (the program orders its shared-memory accesses with its own syncs): a barrier
the analysis would need inside a branch on data or on the thread index, which fails lowering otherwise, is left
out; the barriers it places elsewhere stay (they also order tile operators' internal staging, which the reference
TileLang's templates synchronise themselves).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.config import current_tl_config
from tilelang.transform.thread_range import single_thread_var, walk_ranges

PARTIAL_BARRIERS_OPTION = "partial_barriers"
DISABLE_SYNC = "tl.disable_thread_storage_sync"
FIRST_NAMED_BARRIER = 3
NAMED_BARRIERS = 16
_SCOPES = ("shared", "shared.dyn")
_LOCAL = ("local", "local.var")  # a thread's own variables (T.alloc_local, T.alloc_var)


def _is_call(expr: Any, name: str) -> bool:
    return isinstance(expr, tvm.ir.Call) and isinstance(expr.op, tvm.ir.Op) and expr.op.name == name


def _wrap_conditions(body: Any, if_ok: Any, while_ok: Any) -> tuple[Any, list[Any]]:
    """`body` with each ``if`` condition that `if_ok` accepts and each ``while`` condition that `while_ok` accepts
    wrapped in ``tvm_thread_invariant`` (how TVM's ThreadSync lets a barrier inside), and the wrappers made."""
    made: list[Any] = []

    def wrap(cond: Any) -> Any:
        out = tirx.call_intrin("bool", "tirx.tvm_thread_invariant", cond)
        made.append(out)
        return out

    def marked(cond: Any) -> bool:
        return _is_call(cond, "tirx.tvm_thread_invariant")

    def on_if(s: Any, m: Any) -> Any:
        s = m.default_mutate(s)
        if marked(s.condition) or not if_ok(s.condition):
            return s
        return tirx.IfThenElse(wrap(s.condition), s.then_case, s.else_case)

    def on_while(s: Any, m: Any) -> Any:
        s = m.default_mutate(s)
        return s if marked(s.condition) or not while_ok(s.condition) else tirx.While(wrap(s.condition), s.body)

    return tvm_ffi.structural_mutate(body, [(tirx.IfThenElse, on_if), (tirx.While, on_while)]), made


def _mark_conditions(body: Any, tid: Any) -> tuple[Any, list[Any]]:
    """With partial barriers: the branches that read no memory (on the thread index or not) and the ``while``
    loops not on the thread index may hold barriers (`_wrap_conditions`)."""
    return _wrap_conditions(body, lambda c: not C.collect(c, tvm.ir.TensorLoad),
                            lambda c: not C.uses_var(c, [tid]))


def _thread_dependent_locals(body: Any, tid: Any) -> set[Any]:
    """The ``local`` buffers some store writes from the thread index, directly or through another such buffer
    (or from any other memory: a load may differ between threads)."""
    stores = C.collect(body, tirx.BufferStore, lambda st: C.scope_of(st.buffer) in _LOCAL)
    dependent: set[Any] = set()
    changed = True
    while changed:
        changed = False
        for st in stores:
            if st.buffer in dependent:
                continue
            loads = C.collect(st.value, tvm.ir.TensorLoad) + [ld for i in st.indices
                                                               for ld in C.collect(i, tvm.ir.TensorLoad)]
            if C.uses_var(st.value, [tid]) or any(C.uses_var(i, [tid]) for i in st.indices) or any(
                    C.scope_of(ld.source) not in _LOCAL or ld.source in dependent for ld in loads):
                dependent.add(st.buffer)
                changed = True
    return dependent


def _mark_uniform_conditions(body: Any, tid: Any) -> tuple[Any, list[Any]]:
    """Without partial barriers: `body` with the conditions every thread of the block evaluates alike wrapped in
    ``tvm_thread_invariant`` (a barrier inside them is a whole-block barrier every thread reaches): an ``if`` or a
    ``while`` on neither the thread index nor memory but the threads' own variables that every thread writes alike
    (``bx = b_split; while bx < n: ...; bx += step``)."""
    dependent = _thread_dependent_locals(body, tid)

    def uniform(cond: Any) -> bool:
        loads = C.collect(cond, tvm.ir.TensorLoad)
        return not C.uses_var(cond, [tid]) and all(C.scope_of(ld.source) in _LOCAL and ld.source not in dependent
                                                   for ld in loads)

    return _wrap_conditions(body, uniform, uniform)


def _is_barrier(stmt: Any) -> bool:
    return (isinstance(stmt, tirx.Evaluate) and _is_call(stmt.value, "tirx.tvm_storage_sync")
            and len(stmt.value.args) == 1 and str(stmt.value.args[0].value) in _SCOPES)


def _close_while_loops(body: Any) -> Any:
    """A ``while`` body holding a barrier ends with one. TVM's analysis orders the accesses of one trip through a
    ``while`` loop but not an access late in one trip against an early one in the next (it does for ``for``
    loops): a thread refilling a tile at the top of its next trip raced others still reading it. A body without
    barriers has no accesses of different threads that conflict, in one trip or across two."""

    def ends_with_barrier(stmt: Any) -> bool:
        while isinstance(stmt, tirx.SeqStmt) and len(stmt.seq):
            stmt = stmt.seq[-1]
        return _is_barrier(stmt)

    def on_while(s: Any, m: Any) -> Any:
        s = m.default_mutate(s)
        if not C.collect(s.body, tirx.Evaluate, _is_barrier) or ends_with_barrier(s.body):
            return s
        sync = tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        return tirx.While(s.condition, C.seq([s.body, sync]))

    return tvm_ffi.structural_mutate(body, [(tirx.While, on_while)])


def _unwrap(func: Any, made: list[Any]) -> Any:
    """`func` with the condition wrappers `made` removed again."""

    def unwrap(call: Any) -> Any:
        return call.args[0] if any(call.same_as(w) for w in made) else call

    return C.with_body(func, tvm_ffi.structural_map(func.body, (tvm.ir.Call, unwrap))) if made else func


def _partial_syncs(func: Any, tid: Any, made: list[Any], warp: int) -> Any:
    """`func` with our condition wrappers removed and the barriers inside thread-index branches made named
    barriers of their threads (module docstring)."""
    threads = C.block_threads(func)
    body = _unwrap(func, made).body
    ids: dict[tuple[int, int], int] = {}

    def visit(ev: Any, m: Any, span: tuple[int, int] | None) -> Any:
        call = ev.value
        if not (_is_call(call, "tirx.tvm_storage_sync") and len(call.args) == 1
                and str(call.args[0].value) in _SCOPES) or span == (0, threads):
            return ev
        if span is not None and span[1] == 1:  # one thread: its accesses are ordered by its program order
            return tirx.Evaluate(0)
        if span is None or span[0] % warp or span[1] % warp:
            what = "a contiguous slice of the block" if span is None else \
                f"threads [{span[0]}, {span[0] + span[1]}), not whole warps of {warp}"
            raise C.lowering_error(func, "a shared-memory barrier is needed inside a branch on the thread index "
                                         f"whose threads are {what}; a barrier there must synchronise whole "
                                         "warps of a contiguous thread range (e.g. `if 128 <= tx < 256`)")
        if span not in ids:
            ids[span] = FIRST_NAMED_BARRIER + len(ids)
            if ids[span] >= NAMED_BARRIERS:
                raise C.lowering_error(func, f"barriers inside {len(ids)} different thread ranges need more than "
                                             f"the {NAMED_BARRIERS - FIRST_NAMED_BARRIER} free named barriers")
        return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", call.args[0],
                                              tirx.IntImm("int32", ids[span]), tirx.IntImm("int32", span[1])))

    return C.with_body(func, walk_ranges(body, tid, threads, visit, (tirx.Evaluate,)))


def _reads_shared(expr: Any) -> bool:
    return any(C.scope_of(ld.source) in _SCOPES for ld in C.collect(expr, tvm.ir.TensorLoad))


def _hoist_shared_conditions(body: Any) -> Any:
    """An ``if`` whose condition reads a shared tile evaluates it into a variable first (``c = <cond>; if c:``):
    TVM's access analysis records reads only in statements, and a shared read in a condition failed its
    ``allow_append_`` check (the reference's topk selector, ``if k <= s_histogram[tx]``). Same value, read at the
    same point; the barriers then order that read like any other."""

    def on_if(s: Any, m: Any) -> Any:
        s = m.default_mutate(s)
        cond = s.condition
        if _is_call(cond, "tirx.tvm_thread_invariant") or not _reads_shared(cond):
            return s
        var = tirx.Var("cond", str(cond.ty.dtype))
        return C.seq([tirx.Bind(var, cond), tirx.IfThenElse(var, s.then_case, s.else_case)])

    return tvm_ffi.structural_mutate(body, [(tirx.IfThenElse, on_if)])


def _drop_syncs_between_launches(body: Any) -> Any:
    """`body` without the barriers the analysis put outside every launch's threads (between two ``T.Kernel``
    launches of one function, whose shared-memory accesses it compares as if one block ran both): a kernel
    boundary already orders them, and a barrier there would reach the host code."""

    def on_attr(s: Any, m: Any) -> Any:
        if str(s.attr_key) == "thread_extent" and str(s.node.thread_tag).startswith("threadIdx"):
            return s  # inside a launch's threads: kept
        return m.default_mutate(s)

    def on_eval(ev: Any, m: Any) -> Any:
        return tirx.Evaluate(0) if _is_call(ev.value, "tirx.tvm_storage_sync") else ev

    return tvm_ffi.structural_mutate(body, [(tirx.AttrStmt, on_attr), (tirx.Evaluate, on_eval)])


def _run_syncs(syncs: list[Any], mod: tvm.IRModule) -> tvm.IRModule:
    for sync in syncs:
        mod = sync(mod)
    return mod


def _syncs_outside_branches(syncs: list[Any], mod: tvm.IRModule) -> tvm.IRModule:
    """The barriers of `mod` except those its accesses would need inside a branch on data or on the thread index:
    every remaining condition is marked for the analysis, and the barriers it places inside them are dropped
    (``tl.disable_thread_storage_sync``: the program's own syncs order those accesses)."""
    forced: list[Any] = []
    own: list[Any] = []  # the program's own barriers, kept wherever they are
    for gv, func in list(mod.functions.items()):
        if isinstance(func, tirx.PrimFunc):
            own += C.collect(func.body, tvm.ir.Call, lambda c: _is_call(c, "tirx.tvm_storage_sync"))
            body, made = _wrap_conditions(func.body, lambda c: True, lambda c: False)
            forced += made
            mod[gv] = C.with_body(func, body)
    mod = _run_syncs(syncs, mod)

    def is_sync(ev: Any) -> bool:
        call = ev.value
        return _is_call(call, "tirx.tvm_storage_sync") and not any(call.same_as(c) for c in own)

    def restore(s: Any, m: Any) -> Any:
        s = m.default_mutate(s)
        cond = s.condition
        if not (_is_call(cond, "tirx.tvm_thread_invariant") and any(cond.same_as(w) for w in forced)):
            return s

        def drop(ev: Any) -> Any:
            return tirx.Evaluate(0) if is_sync(ev) else ev

        then_case = tvm_ffi.structural_map(s.then_case, (tirx.Evaluate, drop))
        else_case = None if s.else_case is None else tvm_ffi.structural_map(s.else_case, (tirx.Evaluate, drop))
        return tirx.IfThenElse(cond.args[0], then_case, else_case)

    for gv, func in list(mod.functions.items()):
        if isinstance(func, tirx.PrimFunc):
            mod[gv] = C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.IfThenElse, restore)]))
    return mod


def InsertBarriers(target: Any = None) -> tvm.transform.Pass:
    """Insert ``tvm_storage_sync`` barriers where shared-memory accesses conflict (see the module docstring)."""
    from tvm import s_tir

    syncs = [s_tir.transform.ThreadSync("shared"), s_tir.transform.ThreadSync("shared.dyn")]

    @tvm.transform.module_pass(opt_level=0, name="tl.InsertBarriers")
    def insert_barriers(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
        if target is not None and not C.has_threads(target):
            return mod
        options = C.pipeline_options(target) if target is not None else {}
        marked: dict[str, tuple[Any, list[Any]]] = {}
        partial = bool(options.get(PARTIAL_BARRIERS_OPTION))
        for gv, func in list(mod.functions.items()):
            tid = single_thread_var(func) if isinstance(func, tirx.PrimFunc) else None
            if tid is not None:
                body, made = (_mark_conditions if partial else _mark_uniform_conditions)(func.body, tid)
                mod[gv] = C.with_body(func, body)
                marked[gv.name_hint] = (tid, made)
        for gv, func in list(mod.functions.items()):  # after the marks: a hoisted condition still reads memory
            if isinstance(func, tirx.PrimFunc):
                mod[gv] = C.with_body(func, _hoist_shared_conditions(func.body))
        try:
            synced = _run_syncs(syncs, mod)
        except Exception as exc:
            if "Cannot insert syncs inside condition" not in str(exc) or not current_tl_config(DISABLE_SYNC, False):
                raise
            synced = _syncs_outside_branches(syncs, mod)
        mod = synced
        for gv, func in list(mod.functions.items()):
            if isinstance(func, tirx.PrimFunc):
                mod[gv] = C.with_body(func, _close_while_loops(_drop_syncs_between_launches(func.body)))
        for gv, func in list(mod.functions.items()):
            if gv.name_hint in marked:
                tid, made = marked[gv.name_hint]
                mod[gv] = _partial_syncs(func, tid, made, int(options.get("warp_size", 32))) if partial else \
                    _unwrap(func, made)
        return mod

    return insert_barriers
