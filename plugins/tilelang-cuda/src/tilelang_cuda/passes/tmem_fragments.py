"""TmemFragments: fragments that move in and out of tensor memory live one row per thread (sm_100a).

``T.copy(S_tmem, S)`` reads a 128-row TMEM tile with ``tcgen05.ld .32x32b``: thread ``t`` of a warpgroup reads
datapath (row) ``t``. A fragment filled or emptied that way, and the fragments and row vectors computed from it
row by row (Blackwell flash attention's online softmax: ``S = S_tmem``, ``m = max(S, dim=1)``,
``S[i, j] = exp2(S[i, j] - m[i])``, ``P = S``, ``P_tmem = P``), keep that layout: thread ``t`` of the warpgroup
holds row ``t`` of every ``[128, N]`` fragment of the group (``N`` registers) and element ``t`` of every ``[128]``
row vector (one register). Then

- ``T.copy`` between TMEM and a fragment of the group is ``tcgen05.ld`` / ``.st`` straight between TMEM and the
  thread's registers (`tilelang_cuda.tileops.tmem_copy`), no shared staging;
- a ``T.Parallel(128, N)`` nest that indexes the group's fragments by its own loop variables (``S[i, j]``,
  ``m[i]``) runs over ``j`` on row ``i``'s thread; a ``T.Parallel(128)`` nest over row vectors runs once a thread;
- ``T.fill``, ``T.copy`` within the group and ``T.reduce(S, m, dim=1)`` (a fold over the thread's own registers:
  no shuffle, no shared memory) are per thread, and so is ``T.copy`` between the group and a shared or global
  region (each thread moves its row).

Every use of every fragment of the group must be one of these, made by the same ``G`` warpgroups: the block, or a
branch on the thread index that runs ``128 G`` threads from a multiple of 128 (a warp role, `thread_range`). With
``G > 1`` the warpgroups split the columns: warpgroup ``g`` holds columns ``[g N / G, (g + 1) N / G)`` of its
rows (each warp reads TMEM datapaths ``32 (w % 4)..``), every warpgroup holds the whole row vectors, and a row
reduction meets the ``G`` partial results of a row in a ``G x 128`` shared tile. Otherwise the fragments stay with
core's layouts and `TensorMemory` routes their TMEM copies through shared memory. Runs at ``pre_layout`` before
`TensorMemory`.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.passes.accumulator_rows import _nonunit, cast_to, full_region
from tilelang_cuda.passes.mma_accumulators import _bounds
from tilelang_cuda.passes.tensor_memory import DATAPATHS, TMEM_SCOPE, per_column

FRAGMENT = "local.fragment"
MEMORY = ("shared", "shared.dyn", "global")


def _accesses(node: Any, bufs: Any) -> dict[Any, int]:
    """How many loads, stores and regions of each buffer of `bufs` `node` holds."""
    counts: dict[Any, int] = {}
    for b in [ld.source for ld in C.collect(node, tvm.ir.TensorLoad)] + \
             [st.buffer for st in C.collect(node, tirx.BufferStore)] + \
             [r.source for r in C.collect(node, tvm.ir.TensorRegion)]:
        if b in bufs:
            counts[b] = counts.get(b, 0) + 1
    return counts


class _Plan:
    """Candidates (``[128, N]`` fragments and ``[128]`` row vectors), the uses understood, links between them."""

    def __init__(self, fragments: list[Any]):
        self.shapes = {f: [C.as_int(s) for s in f.ty.shape] for f in fragments}
        self.cands = {f for f, s in self.shapes.items() if None not in s and s[0] == DATAPATHS and len(s) <= 2}
        self.parent: dict[Any, Any] = {}
        self.bad: set[Any] = set()
        self.seeds: set[Any] = set()
        self.spans: dict[Any, set[Any]] = {}
        self.understood: dict[Any, int] = {}

    def find(self, b: Any) -> Any:
        while self.parent.get(b, b) is not b:
            b = self.parent[b]
        return b

    def link(self, bufs: list[Any]) -> None:
        roots = [self.find(b) for b in bufs]
        for r in roots[1:]:
            if r is not roots[0]:
                self.parent[r] = roots[0]

    def is_matrix(self, b: Any) -> bool:
        return b in self.cands and len(self.shapes[b]) == 2

    def is_vector(self, b: Any) -> bool:
        return b in self.cands and len(self.shapes[b]) == 1

    def use(self, node: Any, span: Any, ok: bool, link: list[Any] | None = None) -> None:
        counts = _accesses(node, self.cands)
        for b, n in counts.items():
            self.spans.setdefault(b, set()).add(span)
            self.understood[b] = self.understood.get(b, 0) + n
            if not ok:
                self.bad.add(b)
        if ok and link:
            self.link(link)

    # ------------------------------------------------------------------ tile operators
    def tile_op(self, ev: Any, name: str, call: Any, span: Any) -> None:
        args = list(call.args)
        regions = [a for a in args if isinstance(a, tvm.ir.TensorRegion)]
        if not any(r.source in self.cands for r in regions) and not _accesses(ev, self.cands):
            return
        ok, link = False, []
        if name == "tl.fill" and regions and full_region(args[0]):
            ok = True
        elif name == "tl.copy" and len(regions) >= 2:
            src, dst = args[0], args[1]
            ok, link = self.copy(src, dst)
        elif name == "tl.reduce" and len(args) >= 5:
            src, dst = args[0], args[1]
            ok = (self.is_matrix(src.source) and self.is_vector(dst.source) and full_region(src)
                  and full_region(dst) and C.as_int(args[3]) == 1)
            link = [src.source, dst.source]
        self.use(ev, span, ok, link)

    def copy(self, src: Any, dst: Any) -> tuple[bool, list[Any]]:
        a, b = src.source, dst.source
        if C.scope_of(a) == TMEM_SCOPE or C.scope_of(b) == TMEM_SCOPE:
            tmem_region, frag = (src, dst) if C.scope_of(a) == TMEM_SCOPE else (dst, src)
            rows = C.as_int(tmem_region.region[-2].extent)
            cols = C.as_int(tmem_region.region[-1].extent)
            ok = (self.is_matrix(frag.source) and full_region(frag) and rows == DATAPATHS
                  and C.is_const(tmem_region.region[-2].min, 0) and cols == self.shapes[frag.source][1]
                  and all(C.is_const(r.extent, 1) for r in tmem_region.region[:-2]))
            if ok:
                self.seeds.add(frag.source)
            return ok, []
        if a in self.cands and b in self.cands:
            ok = full_region(src) and full_region(dst) and self.shapes[a] == self.shapes[b]
            return ok, [a, b]
        frag, mem = (src, dst) if a in self.cands else (dst, src)
        if C.scope_of(mem.source) not in MEMORY or not full_region(frag):
            return False, []
        dims = _nonunit(mem)
        return [C.as_int(mem.region[d].extent) for d in dims] == self.shapes[frag.source], []

    # ------------------------------------------------------------------ parallel nests
    def nest(self, loop: Any, loops: list[Any], body: Any, span: Any) -> None:
        counts = _accesses(body, self.cands)
        if not counts:
            return
        lvars = [lp.loop_var for lp in loops]
        extents = [C.as_int(lp.extent) for lp in loops]
        ok = all(C.is_const(lp.min, 0) for lp in loops) and extents[0] == DATAPATHS and len(loops) <= 2
        for ld in C.collect(body, tvm.ir.TensorLoad):
            ok = ok and self._indexed(ld.source, list(ld.indices), lvars, extents)
        for st in C.collect(body, tirx.BufferStore):
            ok = ok and self._indexed(st.buffer, list(st.indices), lvars, extents)
        self.use(loop, span, ok, list(counts))

    def _indexed(self, buf: Any, idx: list[Any], lvars: list[Any], extents: list[Any]) -> bool:
        """A candidate indexed by the nest's own variables (``S[i, j]``, ``m[i]``); any other fragment refuses
        the nest (it is core's)."""
        if buf not in self.cands:
            return C.scope_of(buf) != FRAGMENT
        if len(idx) == 1:
            return idx[0].same_as(lvars[0])
        return (len(lvars) == 2 and idx[0].same_as(lvars[0]) and idx[1].same_as(lvars[1])
                and self.shapes[buf][1] == extents[1])

    # ------------------------------------------------------------------ decision
    def final(self, body: Any) -> tuple[dict[Any, tuple[int, int]], set[Any]]:
        """``({fragment: (first thread, warpgroups)}, rejected)`` for the groups holding a TMEM copy."""
        total = _accesses(body, self.cands)
        bad = set(self.bad)
        bad |= {b for b in self.cands if total.get(b, 0) != self.understood.get(b, 0)}
        groups: dict[Any, list[Any]] = {}
        for b in self.cands:
            groups.setdefault(self.find(b), []).append(b)
        chosen: dict[Any, tuple[int, int]] = {}
        for members in groups.values():
            if not any(m in self.seeds for m in members) or any(m in bad for m in members):
                continue
            spans = set().union(*(self.spans.get(m, set()) for m in members))
            if len(spans) != 1:
                continue
            span = next(iter(spans))
            if span is None or span[1] % DATAPATHS or span[0] % DATAPATHS:
                continue
            parts = span[1] // DATAPATHS  # warpgroups splitting the columns: whole 32-column TMEM chunks each
            if parts > 1 and any(self.is_matrix(m) and self.shapes[m][1] % (32 * per_column(m) * parts)
                                 for m in members):
                continue
            chosen.update({m: (span[0], parts) for m in members})
        return chosen, bad


class _Rewriter:
    def __init__(self, func: Any, chosen: dict[Any, tuple[int, int]]):
        self.chosen = chosen
        tid = C.linear_thread(func)
        self.parts = {b: parts for b, (_, parts) in chosen.items()}
        self.regs = {b: tirx.decl_buffer((C.as_int(b.ty.shape[1]) // parts if len(b.ty.shape) == 2 else 1,),
                                         str(b.ty.dtype), name=f"{b.name}_row", scope="local")
                     for b, (_, parts) in chosen.items()}
        local = {b: tid - begin if begin else tid for b, (begin, _) in chosen.items()}
        self.row = {b: t % DATAPATHS if self.parts[b] > 1 else t for b, t in local.items()}
        # the thread's warpgroup among those splitting the columns
        self.part = {b: t // DATAPATHS if self.parts[b] > 1 else tirx.IntImm("int32", 0) for b, t in local.items()}

    def column(self, buf: Any, j: Any) -> Any:
        """The column of register `j` of a thread holding part of matrix `buf`'s rows."""
        return C.add(self.part[buf] * self.width(buf) if self.parts[buf] > 1 else 0, j)

    def width(self, buf: Any) -> int:
        return int(self.regs[buf].ty.shape[0])

    def per_column(self, buf: Any, make: Any) -> Any:
        j = tirx.Var("j", "int32")
        return tirx.For(j, 0, self.width(buf), tirx.ForKind.UNROLLED, make(j))

    def load(self, buf: Any, j: Any = 0) -> Any:
        return tirx.BufferLoad(self.regs[buf], [j])

    def map_accesses(self, node: Any, j: Any) -> Any:
        """`node` with ``S[i, j]`` -> ``S_row[j]`` and ``m[i]`` -> ``m_row[0]``."""
        def index(buf: Any) -> Any:
            return j if len(buf.ty.shape) == 2 else tirx.IntImm("int32", 0)

        def on_load(ld: Any) -> Any:
            return self.load(ld.source, index(ld.source)) if ld.source in self.chosen else ld

        def on_store(st: Any) -> Any:
            if st.buffer not in self.chosen:
                return st
            return tirx.BufferStore(self.regs[st.buffer], st.value, [index(st.buffer)])

        return tvm_ffi.structural_map(node, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])

    def nest(self, loops: list[Any], body: Any) -> Any:
        buf = next(b for b in _accesses(body, self.chosen))
        row = self.row[buf]
        if len(loops) == 1:
            return C.substitute(self.map_accesses(body, tirx.IntImm("int32", 0)), {loops[0].loop_var: row})
        j = tirx.Var("j", "int32")
        mapped = C.substitute(self.map_accesses(body, j),
                              {loops[0].loop_var: row, loops[1].loop_var: self.column(buf, j)})
        return tirx.For(j, 0, C.as_int(loops[1].extent) // self.parts[buf], tirx.ForKind.UNROLLED, mapped)

    def tile_op(self, ev: Any, name: str, call: Any) -> Any:
        args = list(call.args)
        if name == "tl.fill":
            buf = args[0].source
            value = cast_to(str(buf.ty.dtype), args[1])
            return self.per_column(buf, lambda j: tirx.BufferStore(self.regs[buf], value, [j]))
        if name == "tl.reduce":
            return self.reduce(args)
        src, dst = args[0], args[1]
        if C.scope_of(src.source) == TMEM_SCOPE or C.scope_of(dst.source) == TMEM_SCOPE:
            buf = src.source if src.source in self.chosen else dst.source
            swap = [self.reg_region(r) if r.source in self.chosen else self.columns_of(buf, r) for r in (src, dst)]
            return tirx.Evaluate(tvm.ir.Call(call.op, [*swap, *args[2:]], ret_ty=call.ty))
        if src.source in self.chosen and dst.source in self.chosen:
            dtype = str(dst.source.ty.dtype)
            return self.per_column(src.source, lambda j: tirx.BufferStore(
                self.regs[dst.source], cast_to(dtype, self.load(src.source, j)), [j]))
        into = dst.source in self.chosen
        buf, mem = (dst.source, src) if into else (src.source, dst)
        dims = _nonunit(mem)
        row = self.row[buf]

        def move(j: Any) -> Any:
            idx = [r.min for r in mem.region]
            idx[dims[0]] = C.add(idx[dims[0]], row)
            if len(dims) == 2:
                idx[dims[1]] = C.add(idx[dims[1]], self.column(buf, j))
            inside = _bounds(mem.source, idx)
            if into:
                value = cast_to(str(buf.ty.dtype), tirx.BufferLoad(mem.source, idx))
                if inside is not None:
                    value = tirx.if_then_else(inside, value, tirx.const(0, str(buf.ty.dtype)))
                return tirx.BufferStore(self.regs[buf], value, [j])
            store = tirx.BufferStore(mem.source, cast_to(str(mem.source.ty.dtype), self.load(buf, j)), idx)
            if len(dims) == 1 and self.parts[buf] > 1:  # every warpgroup holds the row vector: the first stores it
                inside = self.part[buf] == 0 if inside is None else tirx.And(self.part[buf] == 0, inside)
            return store if inside is None else tirx.IfThenElse(inside, store, None)

        return self.per_column(buf, move)

    def reg_region(self, region: Any) -> Any:
        regs = self.regs[region.source]
        return tirx.BufferRegion(regs, [tvm.ir.Range.from_min_extent(0, regs.ty.shape[0])])

    def columns_of(self, buf: Any, tmem: Any) -> Any:
        """The TMEM region of the columns this thread holds of `buf`."""
        if self.parts[buf] == 1:
            return tmem
        last = tmem.region[-1]
        cols = tvm.ir.Range.from_min_extent(C.add(last.min, self.column(buf, 0)), self.width(buf))
        return tirx.BufferRegion(tmem.source, [*tmem.region[:-1], cols])

    def reduce(self, args: list[Any]) -> Any:
        from tilelang.backend.sdk import identity_value
        from tilelang_cuda.nan_fold import combine_f32

        src, dst = args[0].source, args[1].source
        kind, clear = str(args[2].value), bool(C.as_int(args[4]))
        plain = {"abssum": "sum", "absmax": "max"}.get(kind, kind)
        dtype = str(dst.ty.dtype)
        part = tirx.decl_buffer((1,), dtype, name="row_part", scope="local")
        cur = tirx.BufferLoad(part, [0])
        fold = [tirx.AllocBuffer(part), tirx.BufferStore(part, identity_value(kind, dtype), [0]),
                self.per_column(src, lambda j: tirx.BufferStore(
                    part, combine_f32(kind, cur, cast_to(dtype, self.load(src, j))), [0]))]
        parts = self.parts[src]
        if parts > 1:  # the warpgroups' partials of a row meet in shared memory (core's barriers order them)
            row = self.row[src]
            scratch = tirx.decl_buffer((parts * DATAPATHS,), dtype, name="row_partials", scope="shared")
            fold += [tirx.AllocBuffer(scratch), tirx.BufferStore(scratch, cur, [self.part[src] * DATAPATHS + row])]
            cur = tirx.BufferLoad(scratch, [row])
            for g in range(1, parts):
                cur = combine_f32(plain, cur, tirx.BufferLoad(scratch, [g * DATAPATHS + row]))
        total = cur if clear else combine_f32(plain, self.load(dst), cur)
        return C.seq([*fold, tirx.BufferStore(self.regs[dst], total, [0])])


def plan(func: Any) -> dict[Any, int]:
    """The fragments kept one row per thread, each with the first thread of the warpgroup holding it."""
    from tilelang.backend.sdk import single_thread_var, walk_ranges

    tmem = [a for a in C.allocations(func.body) if C.scope_of(a.buffer) == TMEM_SCOPE]
    fragments = [a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == FRAGMENT]
    tid = single_thread_var(func)
    if not tmem or not fragments or tid is None:
        return {}
    threads = C.block_threads(func)
    p = _Plan(fragments)

    def visit(node: Any, m: Any, span: Any) -> Any:
        if isinstance(node, tirx.For):
            if C.is_parallel(node):
                loops, body = C.parallel_nest(node)
                p.nest(node, loops, body, span)
                return node
            return m.default_mutate(node)
        found = C.tile_op_of(node)
        if found is not None:
            p.tile_op(node, found[0], found[1], span)
        return node

    walk_ranges(func.body, tid, threads, visit, (tirx.Evaluate, tirx.For))
    chosen, _ = p.final(func.body)
    return chosen


def TmemFragments(target: Any = None) -> tvm.transform.Pass:
    """Keep the fragments tied to TMEM copies one row per thread (see the module docstring)."""

    @C.prim_func_pass("cuda.tmem_fragments")
    def tmem_fragments(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        chosen = plan(func)
        if not chosen:
            return func
        rw = _Rewriter(func, chosen)

        def on_for(loop: Any, mutator: Any) -> Any:
            if C.is_parallel(loop):
                loops, body = C.parallel_nest(loop)
                return rw.nest(loops, body) if _accesses(body, chosen) else loop
            return mutator.default_mutate(loop)

        def on_eval(ev: Any, mutator: Any) -> Any:
            found = C.tile_op_of(ev)
            if found is None or not _accesses(ev, chosen):
                return ev
            return rw.tile_op(ev, *found)

        def on_alloc(alloc: Any) -> Any:
            return tirx.AllocBuffer(rw.regs[alloc.buffer]) if alloc.buffer in chosen else alloc

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.Evaluate, on_eval)])
        body = tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc))
        return C.with_body(func, body)

    return tmem_fragments
