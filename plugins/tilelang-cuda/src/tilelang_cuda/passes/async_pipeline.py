"""Overlap ``cp.async`` copies with compute in ``T.Pipelined`` loops: commit groups per stage, waits that let
``num_stages - 1`` stages stay in flight.

Core's InjectSoftwarePipeline (enabled by this target's ``software_pipeline`` option) turns
``T.Pipelined(n, num_stages=s)`` into a prologue, a steady loop and an epilogue in which the copies of
iteration ``k + s - 1`` are issued before iteration ``k`` computes, each on its own version of the shared
tiles. The ``cp.async`` copy lowering alone would still wait for each copy right away. Two passes fix that:

* `MarkPipelineStages` (``post_layout``, before the expansion) wraps every top-level statement of a pipelined
  loop in an ``AttrStmt`` naming its role (producer = ``tl.copy`` global -> shared, else consumer) and its
  iteration (the loop variable, which the expansion substitutes like any other use); a producer's node also
  names its *run* (the adjacent producers of the body it belongs to). Declarations stay unmarked (a marker
  around one would end its scope; core declares such scratch tiles per pipeline slot).
* `AsyncCopyPipeline` (``post_tile_lowering``) walks the lowered code in program order with the list of
  committed, not yet awaited groups (each: the iteration it loads, the shared buffers it writes). A producer
  instance drops its ``wait_group 0`` and trailing barrier and commits a group (adjacent producers of one
  iteration and one run share one ``commit_group``: a GEMM's A and B copies; flash attention's K and V copies,
  apart in the body, commit one group each, in the prologue too, so every iteration has the same groups;
  commits stay outside the ``j < n`` guards so group counts are static). A consumer of iteration ``j`` needs
  the pending groups that write a buffer it touches, except those of iterations provably after ``j`` (they
  write other versions); if it needs any it gets ``cp.async.wait_group N`` + ``__syncthreads()`` in front,
  ``N`` = the number of groups committed after the newest one it needs (attention: QK^T waits for K(j) only,
  PV for V(j), each with two groups left in flight). Anything else that touches a pending buffer waits for
  all groups. Loops are handled by induction: if the groups pending at the loop entry are
  ``P`` (iterations ``e_i``), the hypothesis is that iteration ``t`` starts with ``e_i + t`` pending; it is
  kept only when the body maps that state to the one of iteration ``t + 1``, else the loop's consumers wait
  for everything. The ``j < n`` guards it re-emits read no thread index (every thread takes the same branch),
  so they are marked ``tvm_thread_invariant``: core's InsertBarriers may then put the barriers a guarded
  consumer needs (the staged B operand of an sm_90a wgmma in a runtime-K epilogue) inside them.

Why results stay those of the serial loop: a consumer of iteration ``j`` reads only what producers of
iterations ``<= j`` wrote (serial semantics, which the expansion keeps), and core gives every buffer a producer
writes ahead of its readers ``S + 1`` versions, so groups of later iterations pending at that point write
other versions. ``wait_group N`` completes every group older than the newest ``N`` (including iteration
``j``'s); the barrier after it publishes all threads' copies. A producer's copies follow a barrier that
follows every earlier read of shared memory: its own leading barrier, dropped only when nothing but copies,
commits and waits ran since the last barrier (at a loop top: neither before the loop nor at the body's end).
Where the analysis is unsure it waits for all groups, which is the unpipelined behaviour.

TMA copies (sm_90a, `tilelang_cuda.tma`) join the same walk as groups of their own: a producer whose copy
lands in version ``j % V`` of a multi-buffered tile keeps only its (leading barrier and) thread-0 issue, on
mbarrier ``base + j % V`` (one per buffer version); the consumer of iteration ``j`` awaits, with
``tl_tma_wait``, exactly the TMA groups a ``wait_group`` would have completed (each barrier once per issue, so
every thread's phase bit stays in step). Guards of such producers are dropped (an iteration past the end loads
out-of-bounds zeros into its own version and is awaited like the others). If any TMA group could not be
tracked (an unknown loop state, one still pending at the end) the walk is redone with every TMA copy awaited
at once.

sm_90a SS wgmma GEMMs keep one wgmma batch in flight (``tl.cuda.wgmma_async_depth``, default 1; 0 restores
the wait per stage): a steady loop that is only ``[cp.async producers of t + d, SS gemm consumer of t]``
(`tilelang_cuda.tileops.gemm.deferrable_wgmma`: no store, one accumulator that nothing else in the loop
touches) is walked as ``[consumer, producers]`` with the consumer's ``wgmma.wait_group 0`` relaxed to
``wait_group 1``. Per iteration: wait cp.async(t) -> barrier -> proxy fence -> wgmma.fence -> wgmmas(t) ->
commit -> wait_group 1 (retires batch t - 1) -> barrier (every warpgroup has retired it) -> cp.async(t + d)
into the version batch t - 1 read -> commit; still two barriers per stage. Right after the loop a
``wait_group 0`` retires the last batch (and pins the accumulator registers) before anything else runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.tileops import gemm as wgmma
from tilelang_cuda.tileops.common import arch_number, extern, extern_name, sync

PRODUCER = "tl.cuda.pipeline_producer"
CONSUMER = "tl.cuda.pipeline_consumer"
_MARKERS = (PRODUCER, CONSUMER)
_SHARED = ("shared", "shared.dyn")
_DECLARATIONS = tuple(getattr(tirx, n) for n in ("AllocBuffer", "Bind", "DeclBuffer") if hasattr(tirx, n))


# ----------------------------------------------------------------------------- marking (before expansion)
def _is_async_candidate(stmt: Any) -> bool:
    """A ``tl.copy`` from global memory into a shared tile (what the cp.async lowering may serve)."""
    found = C.tile_op_of(stmt)
    if found is None or found[0] != "tl.copy" or len(found[1].args) < 2:
        return False
    src, dst = (getattr(a, "source", a) for a in found[1].args[:2])
    try:
        return C.scope_of(src) == "global" and C.scope_of(dst) in _SHARED
    except AttributeError:
        return False


def _mark(stmt: Any, loop_var: Any, run: int) -> Any:
    """`stmt` under its role marker; a producer's node names its run (the index of the first producer of the
    adjacent producers it belongs to in the loop body: the producers of one iteration that share a commit)."""
    if _is_async_candidate(stmt):
        return tirx.AttrStmt(tvm.ir.StringImm(f"{PRODUCER}#{run}"), PRODUCER, loop_var, stmt)
    return tirx.AttrStmt(tvm.ir.StringImm(CONSUMER), CONSUMER, loop_var, stmt)


def _mark_body(stmts: list[Any], loop_var: Any) -> list[Any]:
    """The loop body's statements marked; declarations stay unmarked top-level statements (a marker around
    one would end its scope)."""
    out: list[Any] = []
    run = -1
    for index, stmt in enumerate(stmts):
        if isinstance(stmt, _DECLARATIONS):
            out.append(stmt)
            run = -1
            continue
        producer = _is_async_candidate(stmt)
        run = (index if run < 0 else run) if producer else -1
        out.append(_mark(stmt, loop_var, run))
    return out


def _run_of(marker: Any) -> str:
    return str(marker.node.value) if isinstance(marker.node, tvm.ir.StringImm) else ""


def MarkPipelineStages(target: Any = None) -> tvm.transform.Pass:
    """Tag the top-level statements of ``T.Pipelined`` loops with their role and iteration (module docstring)."""

    @C.prim_func_pass("cuda.mark_pipeline_stages")
    def mark(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        if tgt is None or arch_number(tgt) < 80:
            return func

        def on_for(loop: Any, m: Any) -> Any:
            loop = m.default_mutate(loop)
            if not any(k in loop.annotations for k in C.PIPELINE_KEYS):
                return loop
            body = loop.body
            stmts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
            if len(stmts) < 2 or not any(_is_async_candidate(s) for s in stmts):
                return loop
            marked = tirx.SeqStmt(_mark_body(stmts, loop.loop_var))
            return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, marked, loop.thread_binding,
                            loop.annotations)

        return C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)]))

    return mark


# ----------------------------------------------------------------------------- waits (after lowering)
@dataclass(frozen=True)
class _Group:
    """One committed cp.async group: the iteration it loads (None: unknown) and the variables (buffers and
    their data pointers) it writes (None: possibly any). A TMA copy's group has `tma` = ``(base, versions)``:
    it arrives on mbarrier ``base + iteration % versions``."""

    iteration: Any
    keys: frozenset | None
    tma: tuple[int, int] | None = None


_UNKNOWN = _Group(None, None)


def _is_sync(stmt: Any) -> bool:
    if isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call):
        op = stmt.value.op
        return isinstance(op, tvm.ir.Op) and op.name == "tirx.tvm_storage_sync"
    return False


def _flat(stmt: Any) -> list[Any]:
    if isinstance(stmt, tirx.SeqStmt):
        return [x for s in stmt.seq for x in _flat(s)]
    return [stmt]


def _vars(stmt: Any) -> set[Any]:
    found: set[Any] = set()
    C.walk(stmt, [(tvm.ir.Var, found.add)])
    return found


def _has_marker(stmt: Any) -> bool:
    return bool(C.collect(stmt, tirx.AttrStmt, lambda a: str(a.attr_key) in _MARKERS))


def _has_wait(stmt: Any) -> bool:
    return bool(C.collect(stmt, tirx.Evaluate, lambda e: extern_name(e) == "tl_cp_async_wait_group"))


def _wait(n: int) -> Any:
    return extern("tl_cp_async_wait_group", n)


def _split_tma(body: Any) -> tuple[list[Any], Any, frozenset] | None:
    """The issuing part of a lowered TMA copy (``[sync, if (tid == 0) issue, wait(slot), sync]``), its issue
    call and the shared buffers it writes; None for any other lowering."""
    items = _flat(body)
    if len(items) != 4 or not (_is_sync(items[0]) and _is_sync(items[3])) or extern_name(items[2]) != "tl_tma_wait":
        return None
    guard = items[1]
    if not isinstance(guard, tirx.IfThenElse) or guard.else_case is not None:
        return None
    if extern_name(guard.then_case) != "tl_tma_load_2d":
        return None
    keys = frozenset(v for v in _vars(body) if tirx.is_buffer_var(v) and C.scope_of(v) in _SHARED)
    return items[:2], guard.then_case.value, keys


def _tma_wait(group: _Group) -> Any:
    base, versions = group.tma  # type: ignore[misc]
    return extern("tl_tma_wait", base + tirx.floormod(group.iteration, versions))


def _split_async(body: Any) -> tuple[list[Any], frozenset] | None:
    """The issuing part of a lowered cp.async copy (``[sync, copies, commit, wait 0, sync]`` without its last
    three statements) and the shared buffers it writes; None for any other lowering."""
    items = _flat(body)
    names = [extern_name(s) for s in items]
    if len(items) < 4 or names[-3:-1] != ["tl_cp_async_commit", "tl_cp_async_wait_group"] or not _is_sync(items[-1]):
        return None
    issued = C.collect(body, tirx.Evaluate, lambda e: extern_name(e) == "tl_cp_async16")
    if names.count("tl_cp_async_commit") != 1 or not issued:
        return None
    keys: set[Any] = set()
    for v in _vars(body):
        if tirx.is_buffer_var(v) and C.scope_of(v) in _SHARED:
            keys.add(v)
    return items[:-3], frozenset(keys)


class _Walker:
    """Rewrites one function body in program order, tracking the pending groups (module docstring)."""

    def __init__(self, analyzer: Any, tma: bool = True, wgmma_depth: int = 0):
        self.analyzer = analyzer
        self.wgmma_depth = wgmma_depth  # wgmma batches a steady loop keeps in flight (0: wait for each)
        self.deferred: Any = None  # the consumer whose wgmma wait is relaxed in the loop being walked
        self.dirty = True  # shared memory may have been read since the last barrier
        self.tma = tma  # overlap TMA copies (else they keep their immediate waits)
        self.tma_bases: dict[Any, tuple[int, int]] = {}
        self.unsure = False  # set when a TMA group's barrier could not be tracked: rerun with tma=False
        self.versions: dict[Any, int] = {}
        self.tile_elems: dict[Any, int] = {}
        self.thread_vars: set[Any] = set()  # threadIdx.* (a guard reading none is uniform across the block)

    def tma_group(self, issue: Any, iteration: Any) -> tuple[int, int] | None:
        """``(base, versions)`` for a TMA copy of `iteration` into a version ``iteration % versions`` of a
        multi-buffered tile (so its barrier follows from the iteration), or None."""
        from tilelang_cuda.tma import SLOTS

        ptr = issue.args[4]
        if not (isinstance(ptr, tvm.ir.Call) and isinstance(ptr.op, tvm.ir.Op)
                and ptr.op.name == "tirx.tvm_access_ptr"):
            return None
        data = ptr.args[1]
        if extern_name(tirx.Evaluate(data)) is None and isinstance(data, tvm.ir.Call) and data.args:
            data = data.args[0]  # tirx.buffer_data(buffer)
        versions = self.versions.get(data)
        if versions is None or iteration is None:
            return None
        tile = self.tile_elems[data]
        offset = ptr.args[2]
        if not self.same(offset, tirx.floormod(iteration, versions) * tile):
            return None
        if data not in self.tma_bases:
            used = sum(v for _, v in self.tma_bases.values())
            if 1 + used + versions > SLOTS:
                return None
            self.tma_bases[data] = (1 + used, versions)
        return self.tma_bases[data]

    def waits(self, done: list[_Group]) -> list[Any]:
        """Waits for the TMA groups in `done` (each group's barrier is awaited exactly once)."""
        out = []
        for g in done:
            if g.tma is not None:
                if g.iteration is None:
                    self.unsure = True
                    continue
                out.append(_tma_wait(g))
        return out

    def guarded(self, guard: Any, body: Any) -> Any:
        """`body` under the pipeline guard `guard` (None: none). A guard that reads no thread index is the
        same for every thread of the block, so it is marked ``tvm_thread_invariant``: InsertBarriers (TVM's
        ThreadSync) may then place the barriers `body` needs (a wgmma's staged operand) inside it."""
        if guard is None:
            return body
        if _vars(tirx.Evaluate(guard)).isdisjoint(self.thread_vars):
            guard = tirx.call_intrin("bool", "tirx.tvm_thread_invariant", guard)
        return tirx.IfThenElse(guard, body, None)

    def after(self, stmt: Any) -> None:
        """Update `dirty` for `stmt` just emitted (anything but a barrier or a declaration may read shared
        memory)."""
        if not isinstance(stmt, _DECLARATIONS):
            self.dirty = not _is_sync(_flat(stmt)[-1])

    # -- helpers
    def same(self, a: Any, b: Any) -> bool:
        if a is None or b is None:
            return False
        return bool(self.analyzer.can_prove_equal(a, b))

    @staticmethod
    def touches(stmt_vars: set[Any], pending: list[_Group]) -> bool:
        return any(g.keys is None or not g.keys.isdisjoint(stmt_vars) for g in pending)

    def later(self, group: _Group, iteration: Any) -> bool:
        """Whether `group` provably loads an iteration after `iteration` (so it writes another version)."""
        if group.iteration is None or iteration is None:
            return False
        return bool(self.analyzer.can_prove(group.iteration > iteration))

    def wait_for(self, iteration: Any, pending: list[_Group], stmt_vars: set[Any]) -> tuple[int, list[_Group]] | None:
        """``(N, remaining)`` for a consumer of `iteration` reading `stmt_vars`: the newest pending group it
        needs (one writing what it reads, of an iteration not provably later) and every older one complete under
        ``wait_group N``; None when it needs none."""
        needed = [idx for idx, g in enumerate(pending)
                  if (g.keys is None or not g.keys.isdisjoint(stmt_vars)) and not self.later(g, iteration)]
        if not needed:
            return None
        newer = pending[needed[-1] + 1:]
        return sum(g.tma is None for g in newer), newer

    # -- statements
    def seq(self, stmts: list[Any], pending: list[_Group]) -> tuple[list[Any], list[_Group]]:
        out: list[Any] = []
        open_group = False  # the last emitted statement is the commit of pending[-1]
        open_run = ""  # the producer run (`_mark_body`) of that commit
        for stmt in stmts:
            guard, inner = None, stmt
            if isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None and isinstance(
                    stmt.then_case, tirx.AttrStmt) and str(stmt.then_case.attr_key) in _MARKERS:
                guard, inner = stmt.condition, stmt.then_case
            if isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == PRODUCER and self.tma:
                found = _split_tma(inner.body)
                tma = self.tma_group(found[1], inner.value) if found is not None else None
                if found is not None and tma is not None:
                    issue, call, keys = found
                    base, versions = tma
                    slot = base + tirx.floormod(inner.value, versions)
                    new_call = tirx.call_extern("void", "tl_tma_load_2d", *call.args[1:5], slot, *call.args[6:])
                    issue = [issue[0], tirx.IfThenElse(issue[1].condition, tirx.Evaluate(new_call), None)]
                    if self.dirty:
                        self.dirty = False
                    else:
                        issue = issue[1:]
                    # unguarded: an iteration past the loop's end reads out-of-bounds boxes (zeros) into the
                    # version core reserved for it, and its barrier is awaited like any other
                    out.append(C.seq(issue))
                    pending = [*pending, _Group(inner.value, keys, tma)]
                    open_group = False
                    continue
            if isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == PRODUCER and guard is not None:
                found = _split_tma(inner.body)
                if found is not None:  # a TMA copy awaited at once: its barriers stay outside the guard
                    items = _flat(inner.body)
                    out += [items[0], tirx.IfThenElse(guard, items[1], None), tirx.IfThenElse(guard, items[2], None),
                            items[3]]
                    self.dirty = False
                    open_group = False
                    continue
            if isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == PRODUCER:
                split = _split_async(inner.body)
                if split is not None:
                    issue, keys = split
                    iteration = inner.value
                    if open_group and open_run == _run_of(inner) and self.same(pending[-1].iteration, iteration):
                        out.pop()  # one commit for the producers of one iteration
                        if issue and _is_sync(issue[0]):
                            issue = issue[1:]
                        last = pending.pop()
                        keys = keys | (last.keys or frozenset())
                    if issue and _is_sync(issue[0]):
                        if self.dirty:
                            self.dirty = False  # this barrier orders the copies after earlier readers
                        else:
                            issue = issue[1:]  # nothing read shared memory since the last barrier
                    body = C.seq(issue)
                    out.append(self.guarded(guard, body))
                    out.append(extern("tl_cp_async_commit"))
                    pending = [*pending, _Group(iteration, keys)]
                    open_group, open_run = True, _run_of(inner)
                    continue
                inner_out, pending = self.plain(inner.body, pending, out)
                out.append(self.guarded(guard, inner_out))
                self.after(inner_out)
                open_group = False
                continue
            if isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == CONSUMER:
                body = inner.body
                if self.deferred is not None and inner.same_as(self.deferred):
                    body = wgmma.defer_wait(body, self.wgmma_depth)
                needs = self.wait_for(inner.value, pending, _vars(body))
                if needs is not None:
                    n, remaining = needs
                    done = pending[:len(pending) - len(remaining)]
                    if any(g.tma is None for g in done):
                        out.append(_wait(n))
                    out += self.waits(done)
                    pending = remaining
                    first = _flat(body)[0]
                    if not _is_sync(first):
                        out.append(sync())
                if _has_wait(body):
                    pending = [g for g in pending if g.tma is not None]  # its own cp.async wait_group 0
                out.append(self.guarded(guard, body))
                self.after(body)
                open_group = False
                continue
            new, pending = self.visit(stmt, pending, out)
            out.append(new)
            if not _has_marker(stmt):
                self.after(new)
            open_group = False
        return out, pending

    def plain(self, stmt: Any, pending: list[_Group], out: list[Any]) -> tuple[Any, list[_Group]]:
        """A statement without markers: wait for everything first if it touches a pending buffer."""
        if pending and self.touches(_vars(stmt), pending):
            out += [_wait(0), *self.waits(pending), sync()]
            pending = []
        if _has_wait(stmt):
            pending = [g for g in pending if g.tma is not None]  # its own copies wait for all cp.async groups
        return stmt, pending

    def visit(self, stmt: Any, pending: list[_Group], out: list[Any] | None = None) -> tuple[Any, list[_Group]]:
        out = [] if out is None else out
        if not _has_marker(stmt):
            return self.plain(stmt, pending, out)
        if isinstance(stmt, tirx.SeqStmt) or (isinstance(stmt, tirx.AttrStmt) and str(stmt.attr_key) in _MARKERS):
            items, pending = self.seq(_flat(stmt) if isinstance(stmt, tirx.SeqStmt) else [stmt], pending)
            return C.seq(items), pending
        if isinstance(stmt, tirx.For):
            return self.loop(stmt, pending)
        if isinstance(stmt, tirx.AttrStmt):
            body, pending = self.visit(stmt.body, pending)
            return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body), pending
        # any other structure holding markers: its pipelined parts wait for everything
        prefix = [_wait(0), *self.waits(pending), sync()] if pending else []
        body = _strip_markers(stmt)
        self.dirty = True
        commits = C.collect(body, tirx.Evaluate, lambda e: extern_name(e) == "tl_cp_async_commit")
        return C.seq([*prefix, body]), [_UNKNOWN] if commits else []

    def in_flight_order(self, loop: Any) -> tuple[list[Any], Any] | None:
        """A steady loop ``[cp.async producers of iteration t + d, SS wgmma consumer of t]`` reordered to
        ``[consumer, producers]`` with the consumer's accumulator, when `wgmma_depth` > 0; else None.

        The consumer then ends ``commit, wait_group depth, barrier``: its batch stays in flight while the
        producers (after that barrier) copy into the version the retired batch of t - 1 read. Swapping keeps
        serial results: the producers write only shared versions of a later iteration (the expansion already
        issued them before the consumer, so the consumer never reads them) and the consumer writes only its
        accumulator registers. Every tile a producer writes must be multi-buffered with its iteration
        ``t + d``, ``1 <= d < versions``, in another version than the batch of t still in flight."""
        stmts = _flat(loop.body)
        if self.wgmma_depth <= 0 or len(stmts) < 2:
            return None
        consumer = stmts[-1]
        if not (isinstance(consumer, tirx.AttrStmt) and str(consumer.attr_key) == CONSUMER):
            return None
        acc = wgmma.deferrable_wgmma(consumer.body)
        if acc is None:
            return None
        for stmt in stmts[:-1]:
            inner = stmt.then_case if isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None else stmt
            if not (isinstance(inner, tirx.AttrStmt) and str(inner.attr_key) == PRODUCER):
                return None
            split = _split_async(inner.body)
            if split is None or _split_tma(inner.body) is not None:
                return None
            ahead = inner.value - consumer.value
            for key in split[1]:
                versions = self.versions.get(key)
                if versions is None or not self.analyzer.can_prove(tirx.all(ahead >= 1, ahead < versions)):
                    return None
            if acc.data in _vars(inner.body):
                return None
        return [consumer, *stmts[:-1]], acc

    def loop(self, loop: Any, entry: list[_Group]) -> tuple[Any, list[_Group]]:
        t = loop.loop_var
        self.analyzer.bind(t, tvm.ir.Range.from_min_extent(loop.min, loop.extent), allow_override=True)
        reordered = self.in_flight_order(loop)
        if reordered is not None:
            stmts, acc = reordered
            outer = self.deferred
            self.deferred = stmts[0]
            new, pending = self.loop(tirx.For(t, loop.min, loop.extent, loop.kind, C.seq(stmts), loop.thread_binding,
                                              loop.annotations), entry)
            self.deferred = outer
            # every batch retired before anything after the loop (the epilogue's stages, the accumulator's
            # readers, a later prologue's copies) runs
            return C.seq([new, *wgmma.retire(acc)]), pending

        def state_at(when: Any) -> list[_Group]:
            return [_Group(self.analyzer.simplify(g.iteration + (when - loop.min)), g.keys, g.tma) for g in entry]

        def body_from(state: list[_Group], entry_dirty: bool) -> tuple[list[Any], list[_Group]]:
            """The body for `state` at the top of each iteration; barriers a producer would open with are
            dropped only if neither the code before the loop nor the end of the body reads shared memory
            unfenced (an iteration starts after one or the other)."""
            self.dirty = True
            items, end = self.seq(_flat(loop.body), list(state))
            end_dirty = self.dirty
            if not (entry_dirty or end_dirty):
                self.dirty = False
                items, end = self.seq(_flat(loop.body), list(state))
            self.dirty = entry_dirty or end_dirty
            return items, end

        entry_dirty = self.dirty
        hypothesis = state_at(t) if all(g.iteration is not None for g in entry) else None
        if hypothesis is not None:
            items, end = body_from(hypothesis, entry_dirty)
            nxt = state_at(t + 1)
            if len(end) == len(nxt) and all(self.same(a.iteration, b.iteration) and a.keys == b.keys
                                            and a.tma == b.tma for a, b in zip(end, nxt)):
                new = tirx.For(t, loop.min, loop.extent, loop.kind, C.seq(items), loop.thread_binding,
                               loop.annotations)
                return new, state_at(loop.min + loop.extent)
        if any(g.tma is not None for g in entry):
            self.unsure = True
        items, _ = body_from([_UNKNOWN], entry_dirty)
        new = tirx.For(t, loop.min, loop.extent, loop.kind, C.seq(items), loop.thread_binding, loop.annotations)
        return new, [_UNKNOWN]


def _multi_buffered(body: Any) -> tuple[dict[Any, int], dict[Any, int]]:
    """``{buffer: versions}`` and ``{buffer: elements per version}`` of the shared tiles with a leading version
    dimension (3-D and more: what core's multi-buffering makes of a 2-D tile)."""
    versions: dict[Any, int] = {}
    tiles: dict[Any, int] = {}
    for alloc in C.allocations(body):
        buf = alloc.buffer
        dims = [C.as_int(d) for d in buf.ty.shape]
        if len(dims) >= 3 and None not in dims and C.scope_of(buf) in _SHARED:
            versions[buf] = dims[0]
            tiles[buf] = 1
            for d in dims[1:]:
                tiles[buf] *= d
    return versions, tiles


def _strip_markers(stmt: Any) -> Any:
    return tvm_ffi.structural_map(stmt, (tirx.AttrStmt, lambda a: a.body if str(a.attr_key) in _MARKERS else a))


def _async_depth() -> int:
    """The ``tl.cuda.wgmma_async_depth`` pass config: wgmma batches a pipelined SS gemm keeps in flight."""
    from tilelang.backend.sdk import current_tl_config
    from tilelang.errors import LoweringError

    depth = current_tl_config(wgmma.ASYNC_DEPTH_KEY, wgmma.ASYNC_DEPTH_DEFAULT)
    if isinstance(depth, bool) or depth not in (0, 1):
        raise LoweringError(f"pass config {wgmma.ASYNC_DEPTH_KEY} must be 0 (wait for every wgmma batch) or 1 "
                            f"(keep one batch in flight), got {depth!r}")
    return int(depth)


def AsyncCopyPipeline(target: Any = None) -> tvm.transform.Pass:
    """Commit groups and staged waits for the cp.async copies of pipelined loops (see the module docstring)."""

    @C.prim_func_pass("cuda.async_copy_pipeline")
    def pipeline(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        if not _has_marker(func.body):
            return func
        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))
        versions, tiles = _multi_buffered(func.body)
        depth = _async_depth()
        for tma in (True, False):
            walker = _Walker(analyzer, tma, depth)
            walker.versions, walker.tile_elems = versions, tiles
            walker.thread_vars = {v for tag, (v, _) in C.launch_extents(func).items() if tag.startswith("threadIdx")}
            body, pending = walker.visit(func.body, [])
            if any(g.tma is not None for g in pending):
                walker.unsure = True  # a bulk copy nobody awaits would outlive the block: await each at once
            if not walker.unsure:
                break
        return C.with_body(func, _strip_markers(body))

    return pipeline
