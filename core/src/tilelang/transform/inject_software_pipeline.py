"""InjectSoftwarePipeline: expand ``T.Pipelined`` loops into multi-buffered stages, or run them serially.

A ``T.Pipelined(n, num_stages=s)`` loop carries ``tl.pipeline_*`` annotations. The pass runs on whole tile
operators (before LowerTileOps), where the loop body is a flat list of statements (``tl.copy``, ``tl.gemm``,
parallel nests...). When the target's ``pipeline_options["software_pipeline"]`` is true (and the pass config
``tl.disable_software_pipeline`` is not), each statement ``i`` gets a stage ``stage[i]`` and a position
``order[i]`` -- from the ``stage=`` / ``order=`` annotations, or by default stage 0 for the *producers* (copies
from global memory into shared tiles that nothing else in the loop writes) and stage ``s - 1`` for the rest,
in source order. With ``S = max(stage)`` the loop becomes::

    prologue   T = 0 .. S-1 (unrolled):   every statement with stage <= T, for iteration T - stage
    steady     for t in range(n - S):     every statement, for iteration t + S - stage
    epilogue   T = max(n, S) + e, e < S:  every statement whose iteration T - stage is still < n

so the copies for iteration ``k + S`` are issued while iteration ``k`` computes. Every shared buffer written at
a lower stage than it is read gets ``S + 1`` versions (an extra leading dimension); the statements of iteration
``j`` use version ``j % (S + 1)``, which is never overwritten before its last reader ran. Statements outside the
prologue/epilogue range are guarded by ``iteration < n`` where that is not provable (dynamic trip counts).
Barriers are not placed here: InsertBarriers runs later and sees the versioned buffers.

Declarations at the top level of the body (backend passes lower a tile op into an ``AllocBuffer`` scratch tile
plus the statements using it: the CUDA accumulators staged through shared memory in flash attention) are not
statements of their own: a scratch buffer whose users all run at one stage is declared afresh in each
prologue / steady / epilogue slot right before its first user there (its users in one slot belong to one
iteration, and it is written before it is read in each, as in the serial loop; its lifetime stays one
iteration, so storage planning may still overlap it with other scratch), and a ``Bind`` of a value that reads no
memory is inlined into the statements after it.

The result computes exactly what the serial loop computes. A loop runs serially (annotations dropped) when the
target does not ask for pipelining, ``num_stages <= 1``, the body holds no producer, a top-level scratch
buffer has users at two stages (it would carry values across iterations) or is a ``DeclBuffer`` view, a
top-level ``Bind`` reads memory, or a buffer that needs versions is not a shared tile private to the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.config import current_tl_config

_STAGES, _ORDER, _STAGE = C.PIPELINE_KEYS
_SHARED = ("shared", "shared.dyn")
# operand indices each tile op writes (the others are read)
_WRITES = {"tl.copy": (1,), "tl.fill": (0,), "tl.gemm": (2,), "tl.reduce": (1,), "tl.cumsum": (1,),
           "tl.atomic": (0,),
           "tl.transpose": (1,), "tl.im2col": (1,), "tl.gemm_sp": (3,)}


def _strip(loop: Any) -> Any:
    ann = {k: v for k, v in loop.annotations.items() if k not in C.PIPELINE_KEYS}
    return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, loop.body, loop.thread_binding, ann)


def _operand_buffer(arg: Any) -> Any:
    if isinstance(arg, (tvm.ir.TensorRegion, tvm.ir.TensorLoad)):
        return arg.source
    if isinstance(arg, tvm.ir.Var) and tirx.is_buffer_var(arg):
        return arg
    return None


def accesses(stmt: Any) -> tuple[set[Any], set[Any]]:
    """``(read, written)`` buffers of a tile-level statement (tile-op operands by role, loads, stores)."""
    reads: set[Any] = {ld.source for ld in C.collect(stmt, tvm.ir.TensorLoad)}
    reads |= {r.source for r in C.collect(stmt, tvm.ir.TensorRegion)}
    writes: set[Any] = {st.buffer for st in C.collect(stmt, tirx.BufferStore)}
    for ev in C.collect(stmt, tirx.Evaluate):
        found = C.tile_op_of(ev)
        if found is None:
            continue
        name, call = found
        written = _WRITES.get(name, tuple(range(len(call.args))))
        for n, arg in enumerate(call.args):
            buf = _operand_buffer(arg)
            if buf is not None:
                (writes if n in written else reads).add(buf)
    return reads, writes


def _ints(value: Any) -> list[int] | None:
    if value is None:
        return None
    return [int(C.as_int(v) if C.as_int(v) is not None else v) for v in value]


@dataclass
class _Plan:
    stmts: list[Any]
    stages: list[int]
    order: list[int]        # statement indices in emission order
    versioned: list[Any]    # shared buffers that get S + 1 versions
    scratch: list[Any] = field(default_factory=list)  # top-level AllocBuffers, declared in each slot


_IMPURE_CALL_PREFIXES = ("tl.", "tirx.call_", "tirx.tvm_")


def _pure(value: Any) -> bool:
    """Whether `value` reads no memory and calls nothing with effects (so it may be evaluated anywhere)."""
    if C.collect(value, tvm.ir.TensorLoad):
        return False
    calls = C.collect(value, tvm.ir.Call)
    return not any(isinstance(c.op, tvm.ir.Op) and c.op.name.startswith(_IMPURE_CALL_PREFIXES) for c in calls)


def split_declarations(stmts: list[Any]) -> tuple[list[Any], list[Any]] | None:
    """``(statements, scratch allocations)`` of a loop body's top level: ``Bind`` values inlined into the
    statements after them, ``AllocBuffer`` declarations set apart; None when a declaration cannot be handled
    that way (a ``DeclBuffer`` view, a ``Bind`` reading memory)."""
    out: list[Any] = []
    scratch: list[Any] = []
    binds: dict[Any, Any] = {}
    for s in stmts:
        if isinstance(s, tirx.Bind):
            value = C.substitute(s.value, binds)
            if not _pure(value):
                return None
            binds[s.var] = value
        elif isinstance(s, tirx.AllocBuffer):
            if any(C.as_int(d) is None for d in s.buffer.ty.shape):
                return None
            scratch.append(s)
        elif isinstance(s, tirx.DeclBuffer):
            return None
        else:
            out.append(C.substitute(s, binds))
    return out, scratch


class _Planner:
    """Decides how (and whether) each pipelined loop of a function is expanded."""

    def __init__(self, func: tirx.PrimFunc) -> None:
        self.func = func
        self.allocated = {a.buffer for a in C.allocations(func.body)}
        self.globals = {p for p in func.params if tirx.is_buffer_var(p) and C.scope_of(p) == "global"}

    def _used_outside(self, loop: Any, bufs: set[Any]) -> set[Any]:
        """Buffers of `bufs` that some statement outside `loop` touches."""
        outside: set[Any] = set()

        def visit(node: Any, m: Any) -> Any:
            if node.same_as(loop):
                return node
            return m.default_mutate(node)

        def on_stmt(node: Any, m: Any) -> Any:
            if isinstance(node, (tirx.BufferStore, tirx.Evaluate)):
                r, w = accesses(node)
                outside.update((r | w) & bufs)
                return node
            return visit(node, m)

        tvm_ffi.structural_mutate(self.func.body, [(tirx.For, visit), (tirx.BufferStore, on_stmt),
                                                   (tirx.Evaluate, on_stmt)])
        return outside

    def _is_producer(self, stmt: Any, loop_writes: set[Any]) -> bool:
        """A copy from global memory into shared tiles of the block (reads nothing the loop writes)."""
        evals = C.collect(stmt, tirx.Evaluate)
        if any((C.tile_op_of(e) or ("",))[0] != "tl.copy" for e in evals):
            return False
        reads, writes = accesses(stmt)
        if not writes or any(C.scope_of(b) not in _SHARED or b not in self.allocated for b in writes):
            return False
        return all(b in self.globals and b not in loop_writes for b in reads - writes)

    def plan(self, loop: Any) -> _Plan | None:
        ann = loop.annotations
        num_stages = C.as_int(ann.get(_STAGES, 0)) or 0
        body = loop.body
        top = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
        if loop.kind != tirx.ForKind.SERIAL:
            return None
        split = split_declarations(top)
        if split is None:
            return None
        stmts, scratch = split
        if len(stmts) < 2:
            return None
        if C.collect(body, tirx.For) and any(any(k in lp.annotations for k in C.PIPELINE_KEYS)
                                             for lp in C.collect(body, tirx.For)):
            return None
        rw = [accesses(s) for s in stmts]
        stages = _ints(ann.get(_STAGE))
        order_pos = _ints(ann.get(_ORDER))
        for name, given in (("stage", stages), ("order", order_pos)):
            if given is not None and len(given) != len(stmts):
                if len(top) != len(stmts):
                    return None  # backend passes split the user's statements: the annotation no longer applies
                raise C.lowering_error(self.func, f"T.Pipelined {name}={given} has {len(given)} entries, the loop "
                                                  f"body has {len(stmts)} statements")
        if (stages and min(stages) < 0) or (order_pos and min(order_pos) < 0):
            return None  # the reference's warp-specialised forms: run serially
        if order_pos is not None and sorted(order_pos) != list(range(len(stmts))):
            raise C.lowering_error(self.func, f"T.Pipelined order={order_pos} is not a permutation of "
                                              f"0..{len(stmts) - 1}")
        if stages is None:
            if num_stages <= 1:
                return None
            loop_writes = set().union(*(w for _, w in rw))
            producers = [self._is_producer(s, loop_writes) for s in stmts]
            if not any(producers):
                return None
            producer_writes = set().union(*(w for (_, w), p in zip(rw, producers) if p))
            consumer_writes = set().union(*(w for (_, w), p in zip(rw, producers) if not p))
            if producer_writes & consumer_writes:
                return None
            stages = [0 if p else num_stages - 1 for p in producers]
        if max(stages) == 0:
            return None
        for decl in scratch:  # a scratch tile used at two stages would carry values between iterations
            if len({st for st, s in zip(stages, stmts) if C.uses_var(s, [decl.buffer])}) > 1:
                return None
        order = sorted(range(len(stmts)), key=lambda i: order_pos[i]) if order_pos else list(range(len(stmts)))
        # buffers written at a lower stage than some statement reads them need versions
        versioned = []
        for buf in set().union(*(w for _, w in rw)):
            w_min = min(st for st, (_, w) in zip(stages, rw) if buf in w)
            readers = [st for st, (r, w) in zip(stages, rw) if buf in r or buf in w]
            if max(readers) > w_min:
                versioned.append(buf)
        bad = [b for b in versioned if C.scope_of(b) not in _SHARED or b not in self.allocated]
        if bad or self._used_outside(loop, set(versioned)):
            return None
        return _Plan(stmts, stages, order, sorted(versioned, key=lambda b: str(b.name)), scratch)


def _versioned_access(stmt: Any, remap: dict[Any, Any], slot: Any, analyzer: Any) -> Any:
    """`stmt` with every access to a buffer of `remap` redirected to version `slot` of its replacement (and the
    indices of every access simplified: they just had the iteration substituted in)."""
    lead = [slot]
    lead_range = [tvm.ir.Range.from_min_extent(slot, 1)]
    simplify = analyzer.simplify

    def on_region(r: Any, m: Any) -> Any:
        ranges = [tvm.ir.Range.from_min_extent(simplify(m.mutate(x.min)), m.mutate(x.extent)) for x in r.region]
        if r.source in remap:
            return tirx.BufferRegion(remap[r.source], [*lead_range, *ranges])
        return tirx.BufferRegion(r.source, ranges)

    def on_load(ld: Any, m: Any) -> Any:
        indices = [simplify(m.mutate(i)) for i in ld.indices]
        if ld.source in remap:
            return tirx.BufferLoad(remap[ld.source], [*lead, *indices])
        return tirx.BufferLoad(ld.source, indices)

    def on_store(st: Any, m: Any) -> Any:
        indices = [simplify(m.mutate(i)) for i in st.indices]
        if st.buffer in remap:
            return tirx.BufferStore(remap[st.buffer], m.mutate(st.value), [*lead, *indices])
        return tirx.BufferStore(st.buffer, m.mutate(st.value), indices)

    def on_call(call: Any, m: Any) -> Any:
        if isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("tl."):
            args = []
            for arg in call.args:
                if isinstance(arg, tvm.ir.Var) and arg in remap:  # a whole buffer operand
                    full = [tvm.ir.Range.from_min_extent(0, s) for s in arg.ty.shape]
                    args.append(tirx.BufferRegion(remap[arg], [*lead_range, *full]))
                else:
                    args.append(m.mutate(arg))
            return tvm.ir.Call(call.op, args, ret_ty="void")
        return m.default_mutate(call)

    return tvm_ffi.structural_mutate(stmt, [(tvm.ir.TensorRegion, on_region), (tvm.ir.TensorLoad, on_load),
                                            (tirx.BufferStore, on_store), (tvm.ir.Call, on_call)])


def _fresh(stmt: Any) -> Any:
    """`stmt` with new variables for the loops, bindings and buffers it declares (each copy of a statement in the
    expanded loop must declare its own)."""
    vmap: dict[Any, Any] = {}
    for lp in C.collect(stmt, tirx.For):
        vmap[lp.loop_var] = tirx.Var(str(lp.loop_var.name), str(lp.loop_var.ty.dtype))
    for b in C.collect(stmt, tirx.Bind):
        vmap[b.var] = tirx.Var(str(b.var.name), str(b.var.ty.dtype))
    for a in C.allocations(stmt):
        vmap[a.buffer] = C.buffer_with(a.buffer)
    return C.substitute(stmt, vmap)


def expand(loop: Any, plan: _Plan, remap: dict[Any, Any], analyzer: Any) -> Any:
    """The prologue / steady-state loop / epilogue of `loop` (see the module docstring)."""
    depth = max(plan.stages)
    versions = depth + 1
    n = loop.extent
    dtype = str(loop.loop_var.ty.dtype)

    def instance(i: int, j: Any, guard: bool = True) -> Any:
        """Statement `i` for iteration `j` (0-based), guarded by ``j < n`` unless provable (or `guard` is off:
        the steady state's iterations are in range by construction)."""
        stmt = _fresh(C.substitute(plan.stmts[i], {loop.loop_var: analyzer.simplify(C.add(loop.min, j))}))
        stmt = _versioned_access(stmt, remap, analyzer.simplify(tirx.floormod(j, versions)), analyzer)
        if not guard or analyzer.can_prove(j < n):
            return stmt
        if analyzer.can_prove(j >= n):
            return None
        return tirx.IfThenElse(j < n, stmt, None)

    uses = [[d for d in plan.scratch if C.uses_var(s, [d.buffer])] for s in plan.stmts]

    def slot(items: list[tuple[int, Any]]) -> list[Any]:
        """The instances ``(statement, stmt or None)`` of one slot, each scratch tile declared afresh right
        before its first user there."""
        out: list[Any] = []
        fresh: dict[Any, Any] = {}
        for i, stmt in items:
            if stmt is None:
                continue
            for d in uses[i]:
                if d.buffer not in fresh:
                    fresh[d.buffer] = C.buffer_with(d.buffer)
                    out.append(tirx.AllocBuffer(fresh[d.buffer], d.annotations))
            out.append(C.substitute(stmt, fresh))
        return out

    out: list[Any] = []
    for t in range(depth):
        out += slot([(i, instance(i, tirx.const(t - plan.stages[i], dtype)))
                     for i in plan.order if plan.stages[i] <= t])
    steady = analyzer.simplify(tirx.max(n - depth, 0))
    if not analyzer.can_prove(steady <= 0):
        t = tirx.Var(str(loop.loop_var.name), dtype)
        analyzer.bind(t, tvm.ir.Range.from_min_extent(0, steady))
        body = C.seq(slot([(i, instance(i, t + (depth - plan.stages[i]), guard=False)) for i in plan.order]))
        ann = {k: v for k, v in loop.annotations.items() if k not in C.PIPELINE_KEYS}
        out.append(tirx.For(t, 0, steady, tirx.ForKind.SERIAL, body, None, ann))
    start = analyzer.simplify(tirx.max(n, depth))
    for e in range(depth):
        out += slot([(i, instance(i, start + (e - plan.stages[i]))) for i in plan.order if plan.stages[i] > e])
    return C.seq(out)


def InjectSoftwarePipeline(target: Any = None) -> tvm.transform.Pass:
    """Expand (or serialise) ``tl.pipeline_*`` loops (see the module docstring)."""

    @C.prim_func_pass("tl.InjectSoftwarePipeline")
    def inject_software_pipeline(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        enabled = (tgt is not None and bool(C.pipeline_options(tgt).get("software_pipeline", False))
                   and not current_tl_config("tl.disable_software_pipeline", False))
        loops = [lp for lp in C.collect(func.body, tirx.For) if any(k in lp.annotations for k in C.PIPELINE_KEYS)]
        if not loops:
            return func
        planner = _Planner(func) if enabled else None
        plans = {}
        remap: dict[Any, Any] = {}
        for lp in loops:
            plan = planner.plan(lp) if planner is not None else None
            if plan is None:
                continue
            if any(b in remap for b in plan.versioned):
                continue  # a buffer shared by two pipelined loops: keep the second one serial
            plans[lp] = plan
            depth = max(plan.stages)
            for b in plan.versioned:
                remap[b] = C.buffer_with(b, shape=[depth + 1, *b.ty.shape])

        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))

        def on_for(loop: Any, m: Any) -> Any:
            plan = plans.get(loop)
            if plan is not None:
                own = {b: remap[b] for b in plan.versioned}
                return expand(loop, plan, own, analyzer)
            analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent), allow_override=True)
            out = m.default_mutate(loop)
            return _strip(out) if any(k in out.annotations for k in C.PIPELINE_KEYS) else out

        def on_alloc(a: Any, m: Any) -> Any:
            return tirx.AllocBuffer(remap[a.buffer], a.annotations) if a.buffer in remap else a

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.AllocBuffer, on_alloc)])
        return C.with_body(func, body)

    return inject_software_pipeline
