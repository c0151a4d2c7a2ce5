"""LayoutInference: decide how every ``local.fragment`` tile is spread over the threads of its block.

A fragment is *partitioned* (cyclic: element ``f`` of the row-major tile lives in thread ``f % threads``) when
every parallel loop nest and tile operator touches it element-for-element with the nest's own iteration (the
nest is then split over the threads with the same cyclic rule, so each thread only touches its registers).
Any other access -- a row vector broadcast along a tile (``m[i]`` inside ``Parallel(M, N)``), a nest that must
run whole on every thread, plain code in the kernel body -- makes it *replicated*: every thread holds it all.
The decision is a fixpoint (demoting one fragment can force a nest to run whole). Warp roles: a fragment that only
code inside one branch on the thread index touches (``if 128 <= tx < 256:``, a contiguous slice of a 1-D block, see
`tilelang.transform.thread_range`) is spread over that branch's threads instead (annotated ``{"tl.thread_range":
[begin, count]}``; PartitionParallel splits the branch's nests over the same threads); one touched under two
different ranges is replicated. Tile-operator operands that
are read across elements (gemm A/B, reduce/cumsum sources) impose nothing: their implementation stages a
partitioned fragment through shared memory. On targets without threads every fragment is one block-local tile.

Writes: the annotation ``{"tl.fragment": "partitioned" | "replicated"}`` on each fragment's ``AllocBuffer``.
Opt-in vector layouts: with the target's pipeline option ``fragment_vector_lanes = V`` (> 1), a partitioned
fragment whose innermost extent is a multiple of V (and that has at least ``V * threads`` elements, see
`tilelang.layout.fragment_vector_lanes`) gives each thread runs of V consecutive elements and is annotated
``{"tl.fragment": "partitioned", "tl.vector_lanes": V}``; the others stay cyclic. With
``fragment_vector_scope = "gemm"`` only the fragments tied (by sharing a nest or tile op, transitively) to a
``tl.gemm`` accumulator take V lanes, and parallel nests over no vector fragment stay cyclic. Without the
option the annotations are exactly the ones above.
Width in bits instead: with ``fragment_vector_bits = B`` (e.g. 128 for CUDA's 16-byte loads) the partitioned
fragments tied together by a nest or tile op (transitively) share one width, ``V = B / bits`` of the narrowest
element type among them, halved until every one of them takes it (`tilelang.layout.fragment_vector_lanes`),
except those tied to a ``tl.gemm`` accumulator still here (a backend's tensor-core passes took the ones they
serve; the generic gemm's stay cyclic);
PartitionParallel then splits each V-run into vectors of at most B bits (see there). The option excludes
``fragment_vector_lanes``.
Shared-tile layouts from ``T.annotate_layout`` are not decided here: AttachLayouts (before ``pre_layout``)
moved them onto the tiles' allocations and ApplyLayouts rewrites the tiles once tile operators are lowered
(`tilelang.transform.apply_layouts`). Fragment layouts the user annotates are performance-only: this pass
chooses the distribution itself. Any ``tl.layout_map`` / ``tl.swizzle`` attribute still present (a pipeline
run without AttachLayouts / RasterizeBlocks) is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.errors import LoweringError
from tilelang.layout import CyclicFragment, fragment_vector_lanes
from tilelang.transform import utils as C
from tilelang.transform.thread_range import single_thread_var, walk_ranges

VECTOR_LANES_ANN = "tl.vector_lanes"  # AllocBuffer annotation: the partitioned fragment's vector width (> 1 only)
VECTOR_LANES_OPTION = "fragment_vector_lanes"  # TargetKind.pipeline_options key enabling vector layouts
VECTOR_SCOPE_OPTION = "fragment_vector_scope"  # "all" (default) | "gemm": which fragments / nests take them
VECTOR_SCOPES = ("all", "gemm")
VECTOR_BITS_OPTION = "fragment_vector_bits"  # TargetKind.pipeline_options key: vector layouts sized in bits
THREAD_RANGE_ANN = "tl.thread_range"  # AllocBuffer annotation: [begin, count], the threads a fragment spans

# per tile op: (operand index, role); role "w" = element-wise write, "r" = element-wise read,
# "s" = read across elements (staged), "x" = arbitrary access
_TILE_OP_ROLES: dict[str, list[tuple[int, str]]] = {
    "tl.copy": [(0, "r"), (1, "w")],
    "tl.fill": [(0, "w")],
    "tl.gemm": [(0, "s"), (1, "s"), (2, "w")],
    "tl.reduce": [(0, "s"), (1, "w")],
    "tl.cumsum": [(0, "s"), (1, "x")],
    "tl.atomic": [(1, "r"), (0, "x")],
    "tl.transpose": [(0, "s"), (1, "x")],
    "tl.im2col": [(0, "s"), (1, "x")],
    "tl.gemm_sp": [(0, "s"), (1, "s"), (2, "s"), (3, "w")],
}


@dataclass
class _Nest:
    """One unit of work that the partitioner splits over threads: a parallel nest or a tile op."""

    extents: list[Any]
    writes: dict[Any, bool] = field(default_factory=dict)  # fragment -> accessed element-for-element
    reads: dict[Any, bool] = field(default_factory=dict)
    threads: tuple[int, int] | None = None  # (begin, count): the threads of the block that run it (None: all)


def _squeezed(extents: list[Any]) -> list[int | None]:
    return [C.as_int(e) for e in extents if not C.is_const(e, 1)]


def _same_elements(shape: list[Any], extents: list[Any]) -> bool:
    a, b = _squeezed(list(shape)), _squeezed(list(extents))
    return None not in a and a == b


def _region_is_full(region: Any) -> bool:
    buf = region.source
    return all(C.is_const(r.min, 0) and C.as_int(r.extent) is not None and C.as_int(r.extent) == C.as_int(s)
               for r, s in zip(region.region, buf.ty.shape))


def _note(table: dict[Any, bool], buf: Any, identity: bool) -> None:
    table[buf] = table.get(buf, True) and identity


def _nest_of_loops(loops: list[Any], body: Any, fragments: set[Any]) -> _Nest:
    nest = _Nest([lp.extent for lp in loops])
    lvars = [lp.loop_var for lp in loops]
    unit_vars = [lp.loop_var for lp in loops if C.is_const(lp.extent, 1) and C.is_const(lp.min, 0)]

    def identity(buf: Any, indices: Any) -> bool:
        idx = [i for i in indices]
        shape = list(buf.ty.shape)
        if not _same_elements(shape, nest.extents):
            return False
        # unit dims of the fragment are indexed by 0 (or by the var of a unit loop, ``T.Parallel(1, N)``), the
        # others by the loop vars in order
        loop_it = iter(v for v, e in zip(lvars, nest.extents) if not C.is_const(e, 1))
        for i, s in zip(idx, shape):
            if C.is_const(s, 1):
                if not (C.is_const(i, 0) or any(i.same_as(v) for v in unit_vars)):
                    return False
            elif not i.same_as(next(loop_it, None)):
                return False
        return True

    def on_load(ld: Any) -> None:
        if ld.source in fragments:
            _note(nest.reads, ld.source, identity(ld.source, ld.indices))

    def on_store(st: Any) -> None:
        if st.buffer in fragments:
            _note(nest.writes, st.buffer, identity(st.buffer, st.indices))

    C.walk(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
    return nest


def _nest_of_tile_op(name: str, call: Any, fragments: set[Any]) -> _Nest:
    args = list(call.args)
    nest = _Nest([])
    for index, role in _TILE_OP_ROLES.get(name, []):
        if index >= len(args) or not isinstance(args[index], tvm.ir.TensorRegion):
            continue
        region = args[index]
        if region.source not in fragments or role == "s":
            continue
        full = _region_is_full(region)
        if role == "w":
            _note(nest.writes, region.source, full)
        elif role == "r":
            _note(nest.reads, region.source, full)
        else:
            _note(nest.writes, region.source, False)
    return nest


def scan(body: Any, fragments: set[Any], tid: Any = None, threads: int = 1) -> tuple[list[_Nest], set[Any]]:
    """The work units of `body` and the fragments touched outside any of them. With the block's thread variable
    `tid` (a 1-D block of `threads` threads) each unit records the thread range of the branch it sits in
    (`tilelang.transform.thread_range`)."""
    nests: list[_Nest] = []

    def on_for(loop: Any, mutator: Any, span: Any = None) -> Any:
        if C.is_parallel(loop):
            loops, inner = C.parallel_nest(loop)
            nests.append(_nest_of_loops(loops, inner, fragments))
            nests[-1].threads = span
            return tirx.Evaluate(0)
        return mutator.default_mutate(loop)

    def on_eval(ev: Any, mutator: Any, span: Any = None) -> Any:
        found = C.tile_op_of(ev)
        if found is not None:
            nests.append(_nest_of_tile_op(found[0], found[1], fragments))
            nests[-1].threads = span
            return tirx.Evaluate(0)
        return ev

    if tid is None or threads <= 1:
        rest = tvm_ffi.structural_mutate(body, [(tirx.For, lambda s, m: on_for(s, m)),  # (two parameters: see
                                                (tirx.Evaluate, lambda s, m: on_eval(s, m))])  # PartitionParallel)
    else:
        def visit(node: Any, mutator: Any, span: Any) -> Any:
            span = None if span in (None, (0, threads)) else span
            return (on_for if isinstance(node, tirx.For) else on_eval)(node, mutator, span)

        rest = walk_ranges(body, tid, threads, visit, (tirx.For, tirx.Evaluate))
    outside: set[Any] = set()

    def on_buf(v: Any) -> None:
        if v in fragments:
            outside.add(v)

    C.walk(rest, [(tvm.ir.TensorLoad, lambda ld: on_buf(ld.source)), (tirx.BufferStore, lambda st: on_buf(st.buffer))])
    return nests, outside


def infer_fragment_kinds(body: Any, fragments: set[Any], threads: int, tid: Any = None) -> dict[Any, str]:
    """The fixpoint described in the module docstring."""
    return infer_fragments(body, fragments, threads, tid)[0]


def infer_fragments(body: Any, fragments: set[Any], threads: int,
                    tid: Any = None) -> tuple[dict[Any, str], dict[Any, tuple[int, int]]]:
    """``(kinds, thread ranges)``: the fixpoint of the module docstring, and for each partitioned fragment that
    only code inside one thread-index branch touches, that branch's ``(begin, count)`` threads (the fragment is
    spread over them). A fragment touched under two different thread ranges is replicated."""
    if threads <= 1:
        return {f: "replicated" for f in fragments}, {}
    nests, outside = scan(body, fragments, tid, threads)
    kind = {f: ("replicated" if f in outside else "partitioned") for f in fragments}
    spans: dict[Any, set[Any]] = {}
    for nest in nests:
        for frag in (*nest.writes, *nest.reads):
            spans.setdefault(frag, set()).add(nest.threads)
    for frag, found in spans.items():
        if len(found) > 1:
            kind[frag] = "replicated"
    changed = True
    while changed:
        changed = False
        for nest in nests:
            whole = any(kind[f] == "replicated" for f in nest.writes)
            for table in (nest.writes, nest.reads):
                for frag, ident in table.items():
                    if kind[frag] == "partitioned" and (whole or not ident):
                        kind[frag] = "replicated"
                        changed = True
    ranges = {f: next(iter(spans[f])) for f in fragments
              if kind[f] == "partitioned" and f in spans and next(iter(spans[f])) is not None}
    return kind, ranges


def requested_lanes(options: Any, func: Any = None) -> int:
    """The ``fragment_vector_lanes`` pipeline option (1 when unset); LoweringError (at `func`, when given) when
    it is not a power-of-two int in [1, 16]."""
    lanes = options.get(VECTOR_LANES_OPTION, 1) if options else 1
    if isinstance(lanes, bool) or not isinstance(lanes, int) or not 1 <= lanes <= 16 or lanes & (lanes - 1):
        message = f"pipeline option {VECTOR_LANES_OPTION!r} must be a power-of-two int in [1, 16], got {lanes!r}"
        raise C.lowering_error(func, message) if func is not None else LoweringError(message)
    return lanes


def _gemm_accumulators(body: Any, fragments: Any) -> list[Any]:
    """The `fragments` that are the accumulator (C) of a ``tl.gemm`` in `body`."""
    found: list[Any] = []

    def on_eval(ev: Any) -> None:
        op = C.tile_op_of(ev)
        if op is not None and op[0] == "tl.gemm" and len(op[1].args) > 2:
            region = op[1].args[2]
            if isinstance(region, tvm.ir.TensorRegion) and region.source in fragments:
                found.append(region.source)

    C.walk(body, [(tirx.Evaluate, on_eval)])
    return found


def requested_bits(options: Any, func: Any = None) -> int:
    """The ``fragment_vector_bits`` pipeline option (0 when unset); LoweringError (at `func`, when given) when it
    is not a power-of-two int in [16, 1024] or comes with ``fragment_vector_lanes``."""
    bits = options.get(VECTOR_BITS_OPTION, 0) if options else 0
    message = None
    if isinstance(bits, bool) or not isinstance(bits, int) or (bits and (not 16 <= bits <= 1024 or bits & (bits - 1))):
        message = f"pipeline option {VECTOR_BITS_OPTION!r} must be a power-of-two int in [16, 1024], got {bits!r}"
    elif bits and options.get(VECTOR_LANES_OPTION, 1) != 1:
        message = f"pipeline options {VECTOR_BITS_OPTION!r} and {VECTOR_LANES_OPTION!r} exclude each other"
    if message is not None:
        raise C.lowering_error(func, message) if func is not None else LoweringError(message)
    return int(bits)


def _loop_sharing_groups(body: Any, parts: list[Any]) -> tuple[dict[Any, Any], Any]:
    """Union-find over the fragments `parts`: two are joined when a parallel nest or tile op of `body` touches
    both. ``(parent map, root function)``."""
    parent = {f: f for f in parts}

    def root(f: Any) -> Any:
        while parent[f] is not f:
            f = parent[f]
        return f

    nests, _ = scan(body, set(parts))
    for nest in nests:
        members = [f for f in (*nest.writes, *nest.reads) if f in parent]
        for f in members[1:]:
            parent[root(f)] = root(members[0])
    return parent, root


def vector_lanes_by_bits(body: Any, kinds: dict[Any, str], threads: int, bits: int,
                         counts: dict[Any, int] | None = None) -> dict[Any, int]:
    """The vector width of each partitioned fragment under ``fragment_vector_bits = bits`` (module docstring);
    `counts`: the thread count of the fragments spread over part of the block."""
    counts = counts or {}
    parts = [f for f, k in kinds.items() if k == "partitioned"]
    parent, root = _loop_sharing_groups(body, parts)
    groups: dict[Any, list[Any]] = {}
    for f in parts:
        groups.setdefault(root(f), []).append(f)
    gemm_roots = {root(a) for a in _gemm_accumulators(body, parent)}
    out: dict[Any, int] = {}
    for r, members in groups.items():
        if r in gemm_roots:  # a generic gemm's accumulator (and what shares loops with it) stays cyclic
            continue
        lanes = max(1, bits // min(tvm.DataType(str(f.ty.dtype)).bits for f in members))
        while lanes > 1 and any(fragment_vector_lanes(list(f.ty.shape), counts.get(f, threads), lanes) != lanes
                                for f in members):
            lanes //= 2
        if lanes > 1:
            out.update(dict.fromkeys(members, lanes))
    return out


def vector_scope(options: Any, func: Any = None) -> str:
    """The ``fragment_vector_scope`` pipeline option ("all" when unset); LoweringError when unknown."""
    scope = options.get(VECTOR_SCOPE_OPTION, "all") if options else "all"
    if scope not in VECTOR_SCOPES:
        message = f"pipeline option {VECTOR_SCOPE_OPTION!r} must be one of {VECTOR_SCOPES}, got {scope!r}"
        raise C.lowering_error(func, message) if func is not None else LoweringError(message)
    return str(scope)


def vector_lanes_of(body: Any, kinds: dict[Any, str], threads: int, lanes: int, scope: str,
                    counts: dict[Any, int] | None = None) -> dict[Any, int]:
    """The vector width of each partitioned fragment (see the module docstring). Scope "all": every fragment its
    shape allows; "gemm": only the fragments that share a parallel nest or tile op, directly or through others,
    with a ``tl.gemm`` accumulator."""
    parts = [f for f, k in kinds.items() if k == "partitioned"]
    counts = counts or {}
    want = {f: fragment_vector_lanes(list(f.ty.shape), counts.get(f, threads), lanes) for f in parts}
    if scope == "all":
        return {f: v for f, v in want.items() if v > 1}
    parent, root = _loop_sharing_groups(body, parts)
    chosen = {root(a) for a in _gemm_accumulators(body, parent)}
    return {f: want[f] for f in parts if root(f) in chosen and want[f] > 1}


def fragment_of(alloc: Any, threads: int) -> CyclicFragment:
    """The `CyclicFragment` of a fragment allocation from its LayoutInference annotations (replicated when none);
    one spread over a thread range of the block (``tl.thread_range``) has that range's count and first thread."""
    ann = alloc.annotations or {}
    kind = str(ann.get(C.FRAGMENT_ANN, "replicated"))
    begin = 0
    if THREAD_RANGE_ANN in ann:
        begin, threads = (int(C.as_int(v)) for v in ann[THREAD_RANGE_ANN])
    frag = CyclicFragment.from_ir(list(alloc.buffer.ty.shape), threads, kind, ann.get(VECTOR_LANES_ANN, 1))
    frag.thread_begin = begin
    return frag


def fragment_layouts(body: Any, threads: int) -> dict[Any, CyclicFragment]:
    """The `CyclicFragment` (vector lanes included) of every fragment allocation in `body`."""
    return {a.buffer: fragment_of(a, threads) for a in C.allocations(body)
            if C.scope_of(a.buffer) == "local.fragment"}


def LayoutInference(target: Any = None) -> tvm.transform.Pass:
    """Annotate every fragment allocation with its thread distribution (see the module docstring)."""
    threaded = target is None or C.has_threads(target)

    @C.prim_func_pass("tl.LayoutInference")
    def layout_inference(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        body = tvm_ffi.structural_map(
            func.body,
            (tirx.AttrStmt, lambda s: s.body if str(s.attr_key) in ("tl.layout_map", "tl.swizzle") else s),
        )
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        options = C.pipeline_options(tgt) if tgt is not None else {}
        lanes = requested_lanes(options, func)
        scope = vector_scope(options, func)
        bits = requested_bits(options, func)
        allocs = [a for a in C.allocations(body) if C.scope_of(a.buffer) == "local.fragment"]
        if not allocs:
            return C.with_body(func, body)
        threads = C.block_threads(func) if threaded else 1
        kinds, ranges = infer_fragments(body, {a.buffer for a in allocs}, threads, single_thread_var(func))
        counts = {f: r[1] for f, r in ranges.items()}
        vector = vector_lanes_of(body, kinds, threads, lanes, scope, counts) if lanes > 1 and threads > 1 else {}
        if bits and threads > 1:
            vector = vector_lanes_by_bits(body, kinds, threads, bits, counts)

        def on_alloc(a: Any) -> Any:
            if a.buffer in kinds:
                ann = dict(a.annotations or {})
                ann.pop(VECTOR_LANES_ANN, None)
                ann.pop(THREAD_RANGE_ANN, None)
                ann[C.FRAGMENT_ANN] = kinds[a.buffer]
                if a.buffer in ranges:
                    ann[THREAD_RANGE_ANN] = [tirx.IntImm("int32", v) for v in ranges[a.buffer]]
                if a.buffer in vector:
                    ann[VECTOR_LANES_ANN] = tirx.IntImm("int32", vector[a.buffer])
                return tirx.AllocBuffer(a.buffer, ann)
            return a

        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc)))

    return layout_inference
