"""PartitionParallel: split ``T.Parallel`` nests over the threads of a block and give fragments real storage.

A nest over extents ``(e0, e1, ..)`` that writes no replicated fragment is *partitioned*: with ``T`` threads
and ``E = e0 * e1 * ..`` iterations, thread ``t`` runs ``for k in range(ceil(E / T)): f = k * T + t`` and
unravels ``f`` back to the loop indices (guarded by ``f < E`` when ``T`` does not divide ``E``). This is the
cyclic layout LayoutInference chose, so a partitioned fragment ``F[i, j]`` becomes the thread's register
``F_local[k]`` (scope ``local``, ``ceil(numel / T)`` elements). A nest inside a branch on the thread index that
only threads ``[b, b + n)`` run (warp roles, `tilelang.transform.thread_range`) is split over those: ``T = n``
and ``t`` = thread index - ``b``. Any other nest runs whole on every thread,
and replicated fragments become whole per-thread ``local`` tiles. With one thread (targets without threads)
every nest runs whole; its innermost loop is marked vectorised when the target vectorises and the body is a
single plain store. With vector layouts (pipeline option ``fragment_vector_lanes = V``, see LayoutInference) a
nest over the same elements as a vector-lane fragment -- or touching no partitioned fragment, when
`tilelang.layout.fragment_vector_lanes` grants its extents V lanes and ``fragment_vector_scope`` is "all"
-- is split in runs of V: thread ``t`` runs
``for k: for v in vectorized(V): f = (k * T + t) * V + v`` and the fragment element is register ``k * V + v``;
the lanes run serially instead when the body calls anything but pure arithmetic. Under ``fragment_vector_bits = B``
(LayoutInference) a run wider than B bits of the widest element type the body touches is split into vectors of
``w = B / bits`` lanes, and they stay vectors only where every access outside the thread's registers starts on a
provable multiple of ``w`` elements (the vector instruction needs that alignment; parameters and shared tiles
are aligned to at least B bits) and no fp8 / fp6 / fp4 conversion is in the body; otherwise the lanes run
serially. A nest touching no partitioned fragment is, under ``B``, split in runs of ``w`` lanes only when every
access then is such a vector (shared -> global epilogue copies: one 16-byte store a thread, not eight 2-byte
ones); otherwise it keeps the one-element cyclic distribution. Lanes that all store into one element (a fold) never
become a vector. Afterwards no ``tl.parallel``
loop and no ``local.fragment`` buffer remains (the new
``local`` allocations keep the ``tl.fragment`` annotation until FinalizeTileIR).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.layout import fragment_vector_lanes, unravel
from tilelang.transform import utils as C
from tilelang.transform.layout_inference import fragment_layouts, requested_bits, requested_lanes, vector_scope
from tilelang.transform.thread_range import single_thread_var, walk_ranges

_VECTOR_LIMIT = 64


def _vectorizable(loop: Any) -> bool:
    extent = C.as_int(loop.extent)
    if extent is None or extent > _VECTOR_LIMIT or extent & (extent - 1) or extent < 2:
        return False
    body = loop.body
    if not isinstance(body, tirx.BufferStore):
        return False
    calls = C.collect(body, tvm.ir.Call)
    return not calls


_SIDE_EFFECT_FREE = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "fabs", "tanh", "sigmoid", "floor", "ceil", "round",
                     "pow", "erf", "if_then_else", "isnan", "isinf", "fma", "sin", "cos"}


def _lanes_vectorizable(body: Any) -> bool:
    """Whether a nest body may become one vector statement: stores and loads and pure math only."""
    for call in C.collect(body, tvm.ir.Call):
        if str(getattr(call.op, "name", "")).rsplit(".", 1)[-1] not in _SIDE_EFFECT_FREE:
            return False
    return not C.collect(body, tirx.AllocBuffer)


def _serial(loops: list[Any], body: Any, vectorize: bool, vector_bits: int | None = None) -> Any:
    """`loops` around `body` as serial loops, the innermost vectorised when it may be. With `vector_bits` (the
    ``vector_bits`` pipeline option, e.g. 128 for C's ``float4``) an innermost loop wider than one vector register
    of the stored dtype is split into register-wide vectorised runs."""
    stmt = body
    for n, lp in enumerate(reversed(loops)):
        kind = tirx.ForKind.SERIAL
        if n == 0 and vectorize:
            split = _register_split(lp, body, vector_bits)
            if split is not None:
                stmt = split
                continue
            if _vectorizable(tirx.For(lp.loop_var, lp.min, lp.extent, kind, stmt)) and _fits(lp, body, vector_bits):
                kind = tirx.ForKind.VECTORIZED
        stmt = tirx.For(lp.loop_var, lp.min, lp.extent, kind, stmt)
    return stmt


def _fits(loop: Any, body: Any, vector_bits: int | None) -> bool:
    """Whether `loop` as one vector of its stored dtype fits `vector_bits` (always, when unset)."""
    extent = C.as_int(loop.extent)
    return not vector_bits or (extent is not None
                               and extent * tvm.DataType(str(body.buffer.ty.dtype)).bits <= vector_bits)


def _register_split(loop: Any, body: Any, vector_bits: int | None) -> Any:
    """``for o: for v in vectorized(L): body[i := o * L + v]`` with ``L = vector_bits / bits(stored dtype)``, or
    None when `loop` is not a plain store whose extent is a multiple (> 1) of ``L``."""
    if not vector_bits or not isinstance(body, tirx.BufferStore):
        return None
    lanes = vector_bits // tvm.DataType(str(body.buffer.ty.dtype)).bits
    extent = C.as_int(loop.extent)
    if lanes < 2 or extent is None or extent <= lanes or extent % lanes or C.as_int(loop.min) != 0:
        return None
    if not _vectorizable(tirx.For(loop.loop_var, 0, lanes, tirx.ForKind.SERIAL, body)):
        return None
    outer, lane = tirx.Var(f"{loop.loop_var.name}_o", "int32"), tirx.Var(f"{loop.loop_var.name}_v", "int32")
    inner = C.substitute(body, {loop.loop_var: outer * lanes + lane})
    return tirx.For(outer, 0, extent // lanes, tirx.ForKind.SERIAL,
                    tirx.For(lane, 0, lanes, tirx.ForKind.VECTORIZED, inner))


def _flat(buf: Any, indices: Any) -> Any:
    """The element offset of ``buf[indices]`` (row-major, or through the buffer's strides)."""
    strides = list(buf.ty.strides)
    offset: Any = tirx.const(0, "int32")
    if not strides:
        for i, e in zip(indices, buf.ty.shape):
            offset = offset * e + i
        return offset
    for i, st in zip(indices, strides):
        offset = offset + i * st
    return offset


def _lane_step(offset: Any, lane: Any, ana: Any) -> tuple[Any, Any]:
    """``(offset at lane 0, offset(lane 1) - offset(lane 0))``, simplified."""
    start = ana.simplify(C.substitute(offset, {lane: tirx.const(0, "int32")}))
    return start, ana.simplify(C.substitute(offset, {lane: tirx.const(1, "int32")}) - start)


def _folds_over(body: Any, lane: Any, ana: Any) -> bool:
    """Whether some store of `body` does not provably move by a constant, non-zero step per `lane` (a fold into
    one element, e.g. a reduction's partial): such lanes are not independent and cannot run as one vector."""
    for st in C.collect(body, tirx.BufferStore):
        step = C.as_int(_lane_step(_flat(st.buffer, st.indices), lane, ana)[1])
        if not step:
            return True
    return False


def _casts_sub_byte_floats(body: Any) -> bool:
    """Whether `body` converts to or from an fp8 / fp6 / fp4 type: TVM's C-family codegens have no vector form of
    those conversions (they print a cast between unrelated vector types)."""
    def narrow(dtype: Any) -> bool:
        return str(dtype).startswith(("float8", "float6", "float4"))

    return bool(C.collect(body, tirx.Cast, lambda c: narrow(c.ty.dtype) or narrow(c.value.ty.dtype)))


def _laid_out(func: Any) -> list[Any]:
    """The tiles and tensors of `func` whose storage a ``T.annotate_layout`` layout will rewrite (ApplyLayouts)."""
    from tilelang.transform.apply_layouts import GLOBAL_LAYOUTS_ATTR, LAYOUT_ANN

    found = [a.buffer for a in C.allocations(func.body) if a.annotations and LAYOUT_ANN in a.annotations]
    if func.attrs and GLOBAL_LAYOUTS_ATTR in func.attrs:
        found += list(func.attrs[GLOBAL_LAYOUTS_ATTR].keys())
    return found


def _plain_accesses(body: Any, laid_out: list[Any]) -> bool:
    """Whether every access of `body` is to a byte-or-wider element of a row-major buffer: a layout applied later
    (a swizzle) would turn a vector's index into a gather, and sub-byte lanes have no vector form."""
    bufs = [st.buffer for st in C.collect(body, tirx.BufferStore)] + [ld.source for ld in
                                                                      C.collect(body, tvm.ir.TensorLoad)]
    return all(tvm.DataType(str(b.ty.dtype)).bits >= 8 and not any(b.same_as(x) for x in laid_out) for b in bufs)


def _lane_conditional(loop: Any) -> bool:
    """Whether a condition inside `loop` depends on its variable (an ``if`` or ``if_then_else`` per lane)."""
    lane = [loop.loop_var]
    ifs = C.collect(loop.body, tirx.IfThenElse, lambda s: C.uses_var(s.condition, lane))
    selects = C.collect(loop.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                        and c.op.name == "tirx.if_then_else" and C.uses_var(c.args[0], lane))
    return bool(ifs or selects)


def _element_bits(body: Any) -> int:
    """The widest element type (in bits) that `body` loads or stores."""
    dtypes = [st.buffer.ty.dtype for st in C.collect(body, tirx.BufferStore)]
    dtypes += [ld.source.ty.dtype for ld in C.collect(body, tvm.ir.TensorLoad)]
    return max((tvm.DataType(str(d)).bits for d in dtypes), default=32)


def _vector_accesses(body: Any, lane: Any, width: int, ana: Any) -> Any:
    """`body` with every access to memory outside the thread's registers indexed as ``invariant + lane`` in its
    last dimension (the others free of `lane`), when each such access is ``width``-lane contiguous and starts, at
    ``lane = 0``, on a provable multiple of `width` elements; None when one is not."""
    ok = [True]

    def clean(buf: Any, indices: Any) -> list[Any]:
        if C.scope_of(buf) in ("local", "local.fragment"):  # registers (fragments are by now)
            return list(indices)
        idx = [ana.simplify(i) for i in indices]
        rest = ana.simplify(idx[-1] - lane) if idx else None
        if rest is None or C.uses_var(rest, [lane]) or any(C.uses_var(i, [lane]) for i in idx[:-1]):
            ok[0] = False
            return list(indices)
        idx[-1] = rest + lane
        start = _lane_step(_flat(buf, idx), lane, ana)[0]
        if not ana.can_prove(tirx.floormod(start, width) == 0):
            ok[0] = False
        return idx

    out = tvm_ffi.structural_map(body, [
        (tvm.ir.TensorLoad, lambda ld: tirx.BufferLoad(ld.source, clean(ld.source, ld.indices))),
        (tirx.BufferStore, lambda st: tirx.BufferStore(st.buffer, st.value, clean(st.buffer, st.indices)))])
    return out if ok[0] else None


def PartitionParallel(target: Any = None) -> tvm.transform.Pass:
    """Partition parallel nests over threads (see the module docstring)."""

    @C.prim_func_pass("tl.PartitionParallel")
    def partition_parallel(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        options = C.pipeline_options(tgt) if tgt is not None else {}
        threaded = bool(options.get("has_threads", True))
        vectorize = bool(options.get("vectorize", True))
        threads = C.block_threads(func) if threaded else 1
        lanes_asked = requested_lanes(options, func) if vector_scope(options, func) == "all" else 1
        bits = requested_bits(options, func)
        layouts = fragment_layouts(func.body, threads)
        local: dict[Any, Any] = {}
        for buf, frag in layouts.items():
            if frag.replicated:
                local[buf] = C.buffer_with(buf, scope="local")
            else:
                local[buf] = tirx.decl_buffer((frag.local_size,), str(buf.ty.dtype), name=f"{buf.name}_local",
                                              scope="local")
        partitioned = {b for b, f in layouts.items() if not f.replicated}
        laid_out = _laid_out(func)
        block_tid = C.linear_thread(func)
        block_threads = threads

        def lower_nest(loop: Any, span: tuple[int, int] | None = None) -> Any:
            nonlocal threads, tid
            begin, threads = span if span is not None and block_threads > 1 else (0, block_threads)
            tid = block_tid - begin if begin else block_tid
            loops, body = C.parallel_nest(loop)
            writes = {st.buffer for st in C.collect(body, tirx.BufferStore)}
            used = ({ld.source for ld in C.collect(body, tvm.ir.TensorLoad)} | writes) & partitioned
            wrong = sorted(str(b.name) for b in used
                           if (layouts[b].thread_begin, layouts[b].num_threads) != (begin, threads))
            if wrong:
                raise C.lowering_error(func, f"fragment(s) {wrong} are spread over other threads than the "
                                             f"{threads} threads from {begin} that run this parallel loop")
            whole = threads == 1 or any(b in layouts and b not in partitioned for b in writes)
            if whole:
                touched = {ld.source for ld in C.collect(body, tvm.ir.TensorLoad)} | writes
                bad = touched & partitioned
                if bad:
                    raise C.lowering_error(func, "a parallel loop that every thread runs whole touches the "
                                                 f"partitioned fragment(s) {sorted(str(b.name) for b in bad)}")
                return _serial(loops, body, vectorize and threads == 1, options.get("vector_bits"))
            extents = [lp.extent for lp in loops]
            total = extents[0]
            for e in extents[1:]:
                total = total * e
            touched = ({ld.source for ld in C.collect(body, tvm.ir.TensorLoad)} | writes) & partitioned
            frag_lanes = {layouts[b].vector_lanes for b in touched}
            if len(frag_lanes) > 1:
                widths = sorted(f"{b.name}: {layouts[b].vector_lanes}" for b in touched)
                raise C.lowering_error(func, f"a parallel loop touches partitioned fragments with different vector "
                                             f"widths: {widths}")
            lanes = frag_lanes.pop() if frag_lanes else fragment_vector_lanes(extents, threads, lanes_asked)
            if lanes > 1:
                return vector_nest(loops, body, extents, total, lanes)
            if bits and not touched and vectorize and _plain_accesses(body, laid_out):
                # no fragment decides the distribution: each thread moves one `bits`-wide run when every access
                # can be a provably aligned vector (an epilogue's shared -> global copy: 16-byte stores, not 2-byte)
                width = fragment_vector_lanes(extents, threads, max(1, bits // _element_bits(body)))
                if width > 1:
                    nest = vector_nest(loops, body, extents, total, width)
                    vectors = C.collect(nest, tirx.For, lambda lp: lp.kind == tirx.ForKind.VECTORIZED)
                    # a bounds test on the lane (an edge the analyzer cannot rule out) makes the vectoriser run
                    # every lane alone: then one element a thread, coalesced, stays better
                    if vectors and not any(_lane_conditional(lp) for lp in vectors):
                        return nest
            k = tirx.Var("k", "int32")
            fused = k * threads + tid
            ana = tvm.sym.Analyzer()
            idx = [ana.simplify(e) for e in unravel(fused, extents)]
            lvars = [lp.loop_var for lp in loops]

            def frag_index(buf: Any, indices: Any) -> list[Any]:
                return [k]

            def on_load(ld: Any) -> Any:
                return tirx.BufferLoad(local[ld.source], frag_index(ld.source, ld.indices)) \
                    if ld.source in partitioned else ld

            def on_store(st: Any) -> Any:
                return tirx.BufferStore(local[st.buffer], st.value, frag_index(st.buffer, st.indices)) \
                    if st.buffer in partitioned else st

            body = tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
            body = C.substitute(body, dict(zip(lvars, idx)))
            iters = ana.simplify((total + threads - 1) // threads)
            if not ana.can_prove(total % threads == 0):
                body = tirx.IfThenElse(fused < total, body, None)
            return tirx.For(k, 0, iters, tirx.ForKind.SERIAL, body)

        def vector_nest(loops: list[Any], body: Any, extents: list[Any], total: Any, lanes: int) -> Any:
            k = tirx.Var("k", "int32")
            v = tirx.Var("v", "int32")
            run = k * threads + tid
            ana = tvm.sym.Analyzer()
            # the ranges of the lanes, runs and threads: a fold's row index then simplifies (`_folds_over`)
            step = lanes * threads
            ana.bind(v, tvm.ir.Range.from_min_extent(0, lanes))
            ana.bind(k, tvm.ir.Range.from_min_extent(0, ana.simplify((total + step - 1) // step)))
            for var, extent in C.launch_extents(func).values():
                ana.bind(var, tvm.ir.Range.from_min_extent(0, extent))
            idx = [ana.simplify(e) for e in unravel(run * lanes + v, extents)]
            reg = k * lanes + v

            def on_load(ld: Any) -> Any:
                return tirx.BufferLoad(local[ld.source], [reg]) if ld.source in partitioned else ld

            def on_store(st: Any) -> Any:
                return tirx.BufferStore(local[st.buffer], st.value, [reg]) if st.buffer in partitioned else st

            body = tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
            body = C.substitute(body, dict(zip([lp.loop_var for lp in loops], idx)))
            vectorizable = _lanes_vectorizable(body) and not _folds_over(body, v, ana)
            if bits:
                stmt: Any = bit_vectors(body, v, lanes, vectorizable)
            else:
                kind = tirx.ForKind.VECTORIZED if vectorizable else tirx.ForKind.SERIAL
                stmt = tirx.For(v, 0, lanes, kind, body)
            if not ana.can_prove(total % step == 0):
                stmt = tirx.IfThenElse(run * lanes < total, stmt, None)
            return tirx.For(k, 0, ana.simplify((total + step - 1) // step), tirx.ForKind.SERIAL, stmt)

        def bit_vectors(body: Any, v: Any, lanes: int, vectorizable: bool) -> Any:
            """``for v in range(lanes)`` as vectors of at most `bits` bits, each provably aligned (module doc)."""
            width = max(1, min(lanes, bits // _element_bits(body)))
            vectorizable = vectorizable and not _casts_sub_byte_floats(body)
            ana = tvm.sym.Analyzer()
            if width == lanes:
                vec = _vector_accesses(body, v, width, ana) if vectorizable else None
                return tirx.For(v, 0, lanes, tirx.ForKind.SERIAL, body) if vec is None else tirx.For(
                    v, 0, lanes, tirx.ForKind.VECTORIZED, vec)
            vo, vi = tirx.Var("vo", "int32"), tirx.Var("vi", "int32")
            ana.bind(vo, tvm.ir.Range.from_min_extent(0, lanes // width))
            ana.bind(vi, tvm.ir.Range.from_min_extent(0, width))
            inner = C.substitute(body, {v: vo * width + vi})
            vec = _vector_accesses(inner, vi, width, ana) if vectorizable and width > 1 else None
            lane_loop = tirx.For(vi, 0, width, tirx.ForKind.SERIAL, inner) if vec is None else tirx.For(
                vi, 0, width, tirx.ForKind.VECTORIZED, vec)
            return tirx.For(vo, 0, lanes // width, tirx.ForKind.SERIAL, lane_loop)

        tid = block_tid

        def on_for(loop: Any, mutator: Any, span: tuple[int, int] | None = None) -> Any:
            if C.is_parallel(loop):
                return lower_nest(loop, span)
            return mutator.default_mutate(loop)

        tvar = single_thread_var(func) if threads > 1 else None
        if tvar is None:  # (a callback of three parameters would be given a third argument by structural_mutate)
            body = tvm_ffi.structural_mutate(func.body, [(tirx.For, lambda loop, mutator: on_for(loop, mutator))])
        else:  # a nest inside a branch on the thread index is split over that branch's threads
            body = walk_ranges(func.body, tvar, threads, on_for, (tirx.For,))
        # stray tl.parallel loops nested inside another nest's body run serially
        body = tvm_ffi.structural_map(body, (tirx.For, lambda lp: tirx.For(
            lp.loop_var, lp.min, lp.extent, tirx.ForKind.SERIAL, lp.body) if C.is_parallel(lp) else lp))
        leftover = {ld.source for ld in C.collect(body, tvm.ir.TensorLoad)} | {
            st.buffer for st in C.collect(body, tirx.BufferStore)}
        leftover &= partitioned
        if leftover:
            raise C.lowering_error(func, f"fragment(s) {sorted(str(b.name) for b in leftover)} are used outside "
                                         "parallel loops; write such code inside T.Parallel")
        # remaining replicated accesses and the AllocBuffers (which keep their tl.fragment annotation, so later
        # passes can tell a block's tiles from per-thread locals; FinalizeTileIR drops it)
        return C.with_body(func, C.substitute(body, local))

    return partition_parallel
