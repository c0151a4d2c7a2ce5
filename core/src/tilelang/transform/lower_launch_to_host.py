"""Run a block grid of GPU-style threads on host cores: the launch lowering of every backend whose kernels are host
code (the CPU backend's ``cpu.lower_launch``; a third-party C backend registers it for its own kind).

`LowerLaunchToHost` (at extension point ``post_storage``): the block grid becomes ONE loop over the fused block index
(``ForKind.PARALLEL``: TVM's thread pool spreads blocks over cores; serial when the kernel holds emulated atomics,
which are plain read-modify-writes on the CPU); the launch attributes disappear; code that reads a thread index
(``T.get_thread_binding``) runs inside ``for tx in range(threads)`` loops, split at every barrier so the
barrier's ordering holds, with per-thread ``local`` buffers widened by a thread dimension; shared tiles become
block-local workspace (``global`` scope inside the block loop); barriers are dropped.

Row-streaming order (`stream_rows`): a block whose body is one loop over the rows of a tile that moves along
the contiguous dimension with ``blockIdx.x`` (the usual element-wise form, once its copies are elided) would walk
each row of memory in ``block_N``-wide pieces, one 4 KiB page per row: hostile to the hardware prefetchers. When
nothing in the block outlives a row iteration (no allocation), the blocks along x are independent (the grid's
semantics) and the row loop keeps its order within every block, so the row loop is hoisted over the x blocks:
``for (other blocks, x chunk) in parallel: for row: for bx in chunk: row body`` streams whole rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tilelang.errors import LoweringError
from tilelang.transform.lower_thread_allreduce import bind_thread_loops


def _is_barrier(stmt: Any) -> bool:
    import tvm
    from tvm import tirx

    return (isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call)
            and isinstance(stmt.value.op, tvm.ir.Op) and stmt.value.op.name == "tirx.tvm_storage_sync")


def _has_barrier(stmt: Any) -> bool:
    from tvm import tirx

    from tilelang.transform import utils as C

    return any(_is_barrier(e) for e in C.collect(stmt, tirx.Evaluate))


def _exits_loop(stmt: Any) -> bool:
    """Whether `stmt` holds a ``break`` / ``continue`` of the loop around it (not of a loop nested in it)."""
    from tvm import tirx

    if isinstance(stmt, (tirx.Break, tirx.Continue)):
        return True
    if isinstance(stmt, tirx.SeqStmt):
        return any(_exits_loop(s) for s in stmt.seq)
    if isinstance(stmt, tirx.IfThenElse):
        return _exits_loop(stmt.then_case) or (stmt.else_case is not None and _exits_loop(stmt.else_case))
    if isinstance(stmt, tirx.AttrStmt):
        return _exits_loop(stmt.body)
    return False


def per_thread_buffers(body: Any) -> set[Any]:
    """Buffers each thread owns: ``local`` / ``local.var`` allocations that are not a block's fragment tile."""
    from tilelang.transform import utils as C

    return {a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) in ("local", "local.var")
            and not (a.annotations and C.FRAGMENT_ANN in a.annotations)}


def _touches(stmt: Any, buffers: set[Any]) -> bool:
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    if not buffers:
        return False
    return bool({ld.source for ld in C.collect(stmt, tvm.ir.TensorLoad)} & buffers
                or {st.buffer for st in C.collect(stmt, tirx.BufferStore)} & buffers)


def emulate_threads(stmt: Any, tvars: list[Any], extents: list[int], per_thread: set[Any] | None = None,
                    guard: Any = None) -> Any:
    """Wrap the per-thread parts of a block body in thread loops, split at barriers.

    A statement is per-thread when it reads a thread index or touches a per-thread buffer (reference semantics:
    every thread runs it on its own registers); other statements run once for the block. Nothing changes when
    no statement reads a thread index.

    Where a barrier's loop bound or a ``break`` out of a loop around barriers reads a per-thread value, that
    value is the same on every thread (the threads must all reach the barrier, as on a GPU): thread 0's is read,
    outside the thread loops (`LowerLaunchToHost` binds the thread index to 0 there).

    A branch on a thread index that holds barriers (``if tx < 256:`` around ``T.sync_threads(id, 256)``, a named
    barrier of the threads that take the branch) runs under `guard`, its condition: every statement in it is
    per-thread, each thread loop tests the guard, and the barriers inside split the loops as anywhere else.
    """
    from tvm import tirx

    from tilelang.transform import utils as C

    if guard is None and (not tvars or not C.uses_var(stmt, tvars)):
        return stmt
    per_thread = set() if per_thread is None else per_thread

    def threaded(s: Any) -> bool:
        return guard is not None or C.uses_var(s, tvars) or _touches(s, per_thread)

    def thread_loop(body: Any) -> Any:
        if guard is not None:
            body = tirx.IfThenElse(guard, body, None)
        for v, e in zip(reversed(tvars), reversed(extents)):
            body = tirx.For(v, 0, e, tirx.ForKind.SERIAL, body)
        return body

    if isinstance(stmt, tirx.SeqStmt):
        out: list[Any] = []
        group: list[Any] = []

        def flush() -> None:
            if group:
                out.append(thread_loop(C.seq(group)))
                group.clear()

        for child in stmt.seq:
            if _is_barrier(child):
                flush()
            elif isinstance(child, tirx.AllocBuffer):
                flush()
                out.append(child)
            elif _has_barrier(child):
                flush()
                out.append(emulate_threads(child, tvars, extents, per_thread, guard))
            elif guard is None and _exits_loop(child) and not C.collect(child, tirx.BufferStore):
                # a test that leaves the loop around barriers (all threads leave together): run once, thread 0's
                flush()
                out.append(child)
            elif threaded(child):
                group.append(child)
            else:
                flush()
                out.append(child)
        flush()
        return C.seq(out)
    if isinstance(stmt, tirx.For) and _has_barrier(stmt.body):
        if C.uses_var(stmt.min, tvars) or C.uses_var(stmt.extent, tvars):
            raise LoweringError("a loop whose bounds depend on the thread index holds a barrier: the threads "
                                "would not all reach it")
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind,
                        emulate_threads(stmt.body, tvars, extents, per_thread, guard), stmt.thread_binding,
                        stmt.annotations)
    if isinstance(stmt, tirx.AttrStmt) and _has_barrier(stmt.body):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value,
                             emulate_threads(stmt.body, tvars, extents, per_thread, guard))
    if isinstance(stmt, tirx.IfThenElse) and _has_barrier(stmt):
        cond = stmt.condition
        if not (C.uses_var(cond, tvars) or _touches(tirx.Evaluate(cond), per_thread)):
            return tirx.IfThenElse(cond, emulate_threads(stmt.then_case, tvars, extents, per_thread, guard),
                                   emulate_threads(stmt.else_case, tvars, extents, per_thread, guard)
                                   if stmt.else_case else None)
        # a branch on the thread index around barriers: each side runs under its condition, tested per thread
        written = {st.buffer for st in C.collect(stmt, tirx.BufferStore)}
        if _touches(tirx.Evaluate(cond), written):
            raise LoweringError(f"the condition {cond} of a branch holding a barrier reads a buffer the branch "
                                "writes: the threads cannot be emulated around it")
        both = (lambda c: c) if guard is None else (lambda c: tirx.And(guard, c))
        sides = [emulate_threads(stmt.then_case, tvars, extents, per_thread, both(cond))]
        if stmt.else_case is not None:
            sides.append(emulate_threads(stmt.else_case, tvars, extents, per_thread, both(tirx.Not(cond))))
        return C.seq(sides)
    return thread_loop(stmt)


def _is_allreduce(call: Any) -> bool:
    import tvm

    return (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op)
            and call.op.name == "tirx.tvm_thread_allreduce")


def lower_thread_allreduce(body: Any, tvars: list[Any], extents: list[int]) -> Any:
    """Each ``T.tvm_thread_allreduce`` (under its ``reduce_scope`` reducer) as block-shared exchange through memory.

    ``tvm_thread_allreduce(n, value_0.., cond, result_0.., reduce thread vars..)`` gives every thread the
    reducer's combination of the values of the threads that differ from it only in the named thread variables
    (a thread whose `cond` is false contributes the identity). Lowered for emulated threads: each thread stores
    its value in a block-wide buffer (one slot a thread), a barrier, then each thread folds its group's slots in
    thread order into its result, and a barrier before the buffer is written again; `emulate_threads` then splits
    the thread loops at those barriers.
    """
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    if not tvars:
        return body

    def linear(index: dict[Any, Any]) -> Any:
        out: Any = None
        for v, e in zip(tvars, extents):
            term = index.get(v, v)
            out = term if out is None else out * e + term
        return out

    def on_attr(s: Any, mutator: Any) -> Any:
        if str(s.attr_key) != "reduce_scope" or not isinstance(s.body, tirx.Evaluate) \
                or not _is_allreduce(s.body.value):
            return mutator.default_mutate(s)
        reducer, args = s.node, list(s.body.value.args)
        n = C.as_int(args[0])
        values, cond, results, axes = args[1:1 + n], args[1 + n], args[2 + n:2 + 2 * n], args[2 + 2 * n:]
        reduced = []
        for axis in axes:
            var = next((v for v in tvars if v.same_as(axis)), None)
            if var is None:
                raise LoweringError(f"T.tvm_thread_allreduce reduces over {axis}, which is not a thread index "
                                    "of its kernel (T.get_thread_binding)")
            reduced.append((var, extents[tvars.index(var)]))
        total = math.prod(extents)
        stmts: list[Any] = []
        exchange, loads = [], []
        for i, value in enumerate(values):
            dtype = str(value.ty.dtype)
            buf = tirx.decl_buffer((total,), dtype, name=f"allreduce_{i}", scope="shared")
            exchange.append(buf)
            stmts.append(tirx.AllocBuffer(buf))
            stored = value if C.is_const(cond, True) else tirx.Select(cond, value, reducer.identity_element[i])
            stmts.append(tirx.BufferStore(buf, stored, [linear({})]))
        sync = tirx.Evaluate(tvm.tirx.call_intrin("int32", "tirx.tvm_storage_sync", tvm.ir.StringImm("shared")))
        stmts.append(sync)
        accs = [tirx.decl_buffer((1,), str(v.ty.dtype), name=f"allreduce_acc_{i}", scope="local")
                for i, v in enumerate(values)]
        slots = {var: tirx.Var(f"{var.name}_peer", var.ty.dtype) for var, _ in reduced}
        loads = [tirx.BufferLoad(buf, [linear(slots)]) for buf in exchange]
        acc_loads = [tirx.BufferLoad(acc, [0]) for acc in accs]
        fold_map = {**dict(zip(reducer.lhs, acc_loads)), **dict(zip(reducer.rhs, loads))}
        fold: Any = C.seq([tirx.BufferStore(acc, C.substitute(res, fold_map), [0])
                           for acc, res in zip(accs, reducer.result)])
        for var, extent in reversed(reduced):
            fold = tirx.For(slots[var], 0, extent, tirx.ForKind.SERIAL, fold)
        group = [tirx.AllocBuffer(acc) for acc in accs]
        group += [tirx.BufferStore(acc, ident, [0]) for acc, ident in zip(accs, reducer.identity_element)]
        group.append(fold)
        for result, acc in zip(results, accs):
            if not isinstance(result, tvm.ir.TensorLoad):
                raise LoweringError("T.tvm_thread_allreduce: each result must be a buffer element (buf[i]), got "
                                    f"{result}")
            group.append(tirx.BufferStore(result.source, tirx.BufferLoad(acc, [0]), list(result.indices)))
        stmts.append(C.seq(group))
        stmts.append(sync)
        return C.seq(stmts)

    return tvm_ffi.structural_mutate(body, [(tirx.AttrStmt, on_attr)])


def _fresh_thread_vars(body: Any, tvars: list[Any]) -> Any:
    """Each thread loop binds variables of its own (TVM's SSA form: one definition per variable), instead of every
    loop `emulate_threads` split at a barrier binding the launch's thread variables again."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def on_for(loop: Any) -> Any:
        thread = next((t for t in tvars if loop.loop_var.same_as(t)), None)
        if thread is None:
            return loop
        fresh = tirx.Var(thread.name, thread.ty.dtype)
        return tirx.For(fresh, loop.min, loop.extent, loop.kind, C.substitute(loop.body, {thread: fresh}),
                        loop.thread_binding, loop.annotations)

    return tvm_ffi.structural_map(body, (tirx.For, on_for))


def spill_binds_across_barriers(body: Any, tvars: list[Any], per_thread: set[Any]) -> Any:
    """Per-thread values bound before a barrier and read after it live in a per-thread ``local`` scalar.

    `emulate_threads` splits the thread loops at each barrier; a ``Bind`` of a per-thread value (one that reads a
    thread index or a per-thread buffer) would end with its loop, so its later uses read it from a ``local`` buffer
    instead (which `_widen_thread_locals` then gives a thread dimension).
    """
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    if not tvars or not _has_barrier(body):
        return body

    def on_seq(seq: Any, mutator: Any) -> Any:
        seq = mutator.default_mutate(seq)
        items = list(seq.seq)
        changed = False
        for i, stmt in enumerate(items):
            if not isinstance(stmt, tirx.Bind) or not (C.uses_var(stmt.value, tvars)
                                                        or _touches(tirx.Evaluate(stmt.value), per_thread)):
                continue
            rest = items[i + 1:]
            first_barrier = next((k for k, r in enumerate(rest) if _has_barrier(r)), None)
            if first_barrier is None or not any(C.uses_var(r, [stmt.var]) for r in rest[first_barrier:]):
                continue
            cell = tirx.decl_buffer((1,), str(stmt.var.ty.dtype), name=f"{stmt.var.name}_spill", scope="local")
            load = tirx.BufferLoad(cell, [0])
            items[i] = C.seq([tirx.AllocBuffer(cell), tirx.BufferStore(cell, stmt.value, [0])])
            items[i + 1:] = [C.substitute(r, {stmt.var: load}) for r in rest]
            changed = True
        return C.seq(items) if changed else seq

    return tvm_ffi.structural_mutate(body, [(tirx.SeqStmt, on_seq)])


def _widen_thread_locals(body: Any, tvars: list[Any], extents: list[int]) -> Any:
    """Give every per-thread buffer touched in a thread loop a leading thread dimension."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    if not tvars:
        return body
    loops = [lp for lp in C.collect(body, tirx.For) if any(lp.loop_var.same_as(v) for v in tvars)]
    touched: set[Any] = set()
    for lp in loops:
        touched |= {ld.source for ld in C.collect(lp.body, tvm.ir.TensorLoad)}
        touched |= {st.buffer for st in C.collect(lp.body, tirx.BufferStore)}
    inner = {a.buffer for lp in loops for a in C.allocations(lp.body)}
    wide = {}
    for alloc in C.allocations(body):
        buf = alloc.buffer
        if buf in touched and buf not in inner and C.scope_of(buf) in ("local", "local.var"):
            wide[buf] = C.buffer_with(buf, shape=[math.prod(extents), *buf.ty.shape], scope="local")
    if not wide:
        return body
    linear: Any = 0
    for v, e in zip(tvars, extents):
        linear = v if isinstance(linear, int) else linear * e + v

    def index(indices: Any) -> list[Any]:
        return [linear, *indices]

    body = tvm_ffi.structural_map(body, [
        (tvm.ir.TensorLoad, lambda ld: tirx.BufferLoad(wide[ld.source], index(ld.indices)) if ld.source in wide
         else ld),
        (tirx.BufferStore, lambda st: tirx.BufferStore(wide[st.buffer], st.value, index(st.indices))
         if st.buffer in wide else st),
    ])
    return C.substitute(body, wide)


_STACK_BYTES = 1024
_CHUNKS_PER_THREAD = 4  # parallel work items per pool thread when rows are streamed


def _accesses(stmt: Any) -> list[tuple[Any, list[Any]]]:
    """``(buffer, indices)`` of every load and store in `stmt`."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    return ([(ld.source, list(ld.indices)) for ld in C.collect(stmt, tvm.ir.TensorLoad)]
            + [(st.buffer, list(st.indices)) for st in C.collect(stmt, tirx.BufferStore)])


def _streams_rows(body: Any, bx: Any) -> bool:
    """Whether `body` is one row loop, with no allocation, over tiles that ``bx`` moves along the last dimension."""
    from tvm import tirx

    from tilelang.transform import utils as C

    if not isinstance(body, tirx.For) or body.kind != tirx.ForKind.SERIAL or C.allocations(body):
        return False
    if C.uses_var(body.min, [bx]) or C.uses_var(body.extent, [bx]):  # the row loop moves outside bx
        return False
    if C.collect(body, tirx.AttrStmt) or any(_is_barrier(e) for e in C.collect(body, tirx.Evaluate)):
        return False
    accesses = _accesses(body)
    if not accesses or not any(C.uses_var(idx[-1], [bx]) for _, idx in accesses if idx):
        return False
    for _, idx in accesses:
        if not idx or any(C.uses_var(i, [bx]) for i in idx[:-1]) or C.uses_var(idx[-1], [body.loop_var]):
            return False
    return True


def _fuse_columns(loop: Any) -> Any:
    """``for xb: for j in range(w): X[.., xb * w + j]`` as one loop over ``size * w`` contiguous columns.

    The substitution ``xb = c // w, j = c % w`` is exact for any body; it is applied when every access's last
    index moves by ``w`` per ``xb`` and by 1 per ``j`` (the simplifier then folds it back to ``c``), so LLVM sees a
    single long contiguous loop to vectorise and unroll instead of many ``w``-wide pieces.
    """
    import tvm.sym
    from tvm import tirx

    from tilelang.transform import utils as C

    inner = loop.body
    if not isinstance(inner, tirx.For) or C.as_int(inner.extent) is None or C.as_int(loop.extent) is None:
        return loop
    w = C.as_int(inner.extent)
    for _, idx in _accesses(inner.body):
        if not idx:
            return loop
        coefs = tvm.sym.detect_linear_equation(idx[-1], [loop.loop_var, inner.loop_var])
        if len(coefs) != 3 or C.as_int(coefs[0]) != w or C.as_int(coefs[1]) != 1:
            return loop
    c = tirx.Var("col", "int32")
    w_c = tirx.const(w, "int32")
    body = C.substitute(inner.body, {loop.loop_var: tirx.floordiv(c, w_c), inner.loop_var: tirx.floormod(c, w_c)})
    return tirx.For(c, 0, C.as_int(loop.extent) * w, tirx.ForKind.SERIAL, body)


def stream_rows(body: Any, blocks: list[tuple[Any, Any]], threads: int) -> Any | None:
    """The block grid as ``parallel(other blocks x chunks of bx) / row loop / bx`` (module docstring), or None
    when `body` does not have that form. `blocks`: ``(var, extent)`` for x, y, z in that order."""
    import math

    from tvm import tirx

    from tilelang.layout import unravel
    from tilelang.transform import utils as C

    extents = [C.as_int(e) for _, e in blocks]
    if not blocks or any(e is None for e in extents) or not _streams_rows(body, blocks[0][0]):
        return None
    gx, outer = extents[0], math.prod(extents[1:])
    want = max(1, _CHUNKS_PER_THREAD * threads)
    chunks = next((c for c in range(1, gx + 1) if gx % c == 0 and outer * c >= want), gx)
    size = gx // chunks
    p, xb = tirx.Var("block", "int32"), tirx.Var("block_x", "int32")
    # p -> (z, y, chunk) with the chunk fastest
    idx = unravel(p, [*extents[1:][::-1], chunks])
    bind = {blocks[0][0]: idx[-1] * size + xb if chunks > 1 else xb}
    bind |= {v: i for (v, _), i in zip(blocks[1:], idx[:-1][::-1])}
    row = body
    inner = _fuse_columns(tirx.For(xb, 0, size, tirx.ForKind.SERIAL, C.substitute(row.body, bind)))
    hoisted = tirx.For(row.loop_var, row.min, row.extent, row.kind, inner, row.thread_binding, row.annotations)
    return tirx.For(p, 0, outer * chunks, tirx.ForKind.PARALLEL, C.substitute(hoisted, bind))


def _bytes(buf: Any) -> int | None:
    """Bytes of a constant-shape buffer, else None."""
    from tvm import DataType

    from tilelang.transform import utils as C

    n = C.num_elements(buf.ty.shape)
    dt = DataType(str(buf.ty.dtype))
    return None if n is None else n * max(1, dt.bits * dt.lanes // 8)


def LowerLaunchToHost(target: Any = None, *, name: str = "tl.lower_launch_to_host",
                      hoist_invariants: Callable[[Any, list[Any]], tuple[Any, list[Any]]] | None = None,
                      stream_rows_when: Callable[[], bool] | None = None) -> Any:
    """The tvm pass that turns the block grid into a parallel loop and emulates threads (module docstring).

    `hoist_invariants(block body, launch vars)` -> ``(body, statements run once before the blocks)`` lets a backend
    hoist per-call work out of the block loop (the CPU backend packs GEMM operands there); `stream_rows_when()`,
    asked while the pass runs (under the compile's pass configs), turns the row-streaming block order on.
    """
    import tvm_ffi
    from tvm import tirx

    from tilelang import env
    from tilelang.layout import unravel
    from tilelang.tileop.atomic import ATOMIC_ATTR
    from tilelang.transform import utils as C

    @C.prim_func_pass(name)
    def lower_launch(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        if not C.launch_extents(func):
            return func
        streaming = stream_rows_when is not None and stream_rows_when()

        def strip(s: Any) -> Any:
            if str(s.attr_key) in ("thread_extent", ATOMIC_ATTR):
                return s.body
            return s

        def drop_barrier(ev: Any) -> Any:
            return tirx.Evaluate(0) if _is_barrier(ev) else ev

        def on_launch(s: Any, mutator: Any) -> Any:
            if str(s.attr_key) != "thread_extent" or not str(s.node.thread_tag).startswith("blockIdx"):
                return mutator.default_mutate(s)
            # each launch of the function (``with T.Kernel``) has its own grid, threads and variables
            ext = C.launch_extents(s)
            blocks = [(ext[t][0], ext[t][1]) for t in C.BLOCK_TAGS if t in ext]
            threads = [(ext[t][0], C.as_int(ext[t][1])) for t in C.THREAD_TAGS if t in ext]
            tvars = [v for v, _ in threads]
            body, hoisted = s.body, []
            if hoist_invariants is not None:  # e.g. GEMM operands packed once per call, before the blocks
                body, hoisted = hoist_invariants(s.body, [v for v, _ in blocks] + tvars)
            loop = lower_blocks(body, ext, blocks, tvars, [e or 1 for _, e in threads])
            return C.seq([*hoisted, loop]) if hoisted else loop

        def lower_blocks(body: Any, ext: dict[str, Any], blocks: list[tuple[Any, Any]], tvars: list[Any],
                         textents: list[int]) -> Any:
            atomics = bool(C.collect(body, tirx.AttrStmt, lambda s: str(s.attr_key) == ATOMIC_ATTR))
            body = tvm_ffi.structural_map(body, (tirx.AttrStmt, strip))
            body = bind_thread_loops(body, {t: (v, C.as_int(e)) for t, (v, e) in ext.items() if t in C.THREAD_TAGS})
            body = lower_thread_allreduce(body, tvars, textents)
            body = spill_binds_across_barriers(body, tvars, per_thread_buffers(body))
            body = emulate_threads(body, tvars, textents, per_thread_buffers(body))
            body = _widen_thread_locals(body, tvars, textents)
            body = _fresh_thread_vars(body, tvars)
            # what still reads a thread index runs outside the thread loops on uniform values: thread 0's
            body = C.substitute(body, {v: tirx.const(0, str(v.ty.dtype)) for v in tvars})
            body = tvm_ffi.structural_map(body, (tirx.Evaluate, drop_barrier))
            # x varies fastest in the fused index (block (x, y, z) -> x + y * gx + z * gx * gy)
            sizes = [e for _, e in blocks][::-1]
            total = sizes[0]
            for e in sizes[1:]:
                total = total * e
            parallel = not atomics and not C.is_const(total, 1)
            if parallel and streaming and "blockIdx.x" in ext:
                streamed = stream_rows(body, blocks, env.num_threads())
                if streamed is not None:
                    return streamed
            # an int64 grid (``T.dynamic(.., "int64")`` extents) needs an int64 block index
            b = tirx.Var("block", "int32" if isinstance(total, int) else str(total.ty.dtype))
            idx = unravel(b, sizes)[::-1]
            body = C.substitute(body, {v: i for (v, _), i in zip(blocks, idx)})
            return tirx.For(b, 0, total, tirx.ForKind.PARALLEL if parallel else tirx.ForKind.SERIAL, body)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.AttrStmt, on_launch)])
        body = tvm_ffi.structural_map(body, (tirx.AttrStmt, strip))
        remap = {}
        for alloc in C.allocations(body):
            if C.scope_of(alloc.buffer).startswith("shared"):
                remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope="global")
            elif C.scope_of(alloc.buffer) in ("local", "local.var", "local.fragment"):
                # TVM keeps only "global" CPU allocations under 1 KiB on the stack (registers after promotion);
                # any "local" one, even a scalar, becomes a heap workspace call
                small = _bytes(alloc.buffer) is not None and _bytes(alloc.buffer) < _STACK_BYTES
                scope = "global" if small else "local"
                if scope != C.scope_of(alloc.buffer):
                    remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope=scope)
        return C.with_body(func, C.substitute(body, remap))

    return lower_launch
