"""Row vectors of tensor-core accumulators, kept in the registers of the threads that own the rows.

Flash attention and fused softmax-GEMM kernels pair an ``M x N`` accumulator with ``[M]`` fragments: the row
max / sum (``T.reduce_max(acc, m, dim=1)``), rescale factors read in ``acc[i, j] * scale[i]``. Core's generic
path replicates such a vector in every thread (dynamically indexed, so it lives in local memory) and reduces
through shared memory. In the MMA layout (`tilelang_cuda.mma_layout`) a thread's rows are
``mi * 16 * wm + w_m * 16 + lane // 4 + h * 8`` for ``mi < M / (16 wm)``, ``h < 2``, shared with the three other
lanes of its quad (``lane ^ 1``, ``lane ^ 2``, ``lane ^ 3``) and, with ``wn > 1``, with the same lanes of the
other warp columns (each holding its own slice of the row's columns). A row vector tied to such an accumulator
gets ``2 * mi`` registers, slot ``s = 2 * mi + h`` (the same values in every warp column), and its uses run per
slot:

- ``tl.reduce(acc, m, dim=1)`` (float32, sum/max/min/abssum/absmax): each thread folds its registers of the
  row, two ``shfl.xor`` (masks 1, 2) combine the quad; with ``wn > 1`` the quads' partials meet in a
  ``wn x M`` shared scratch tile (core's barrier pass separates its writes and reads) and every thread combines
  the ``wn`` partials of its rows; ``clear=False`` folds in the old value;
- a ``T.Parallel(M, N)`` nest over the accumulator reads ``m[i]`` from the slot of the register's row;
- a ``T.Parallel(M)`` nest touching only row vectors (indexed by its loop variable) runs over the slots;
- ``tl.fill``, ``tl.copy`` between row vectors and ``tl.copy`` of a row vector out to memory run per slot (the
  copy out by the first warp column only).

Row vectors linked by a copy or a nest are decided together; one with any other use (or tied to accumulators
whose rows are owned differently) stays with core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import identity_value
from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import AccumulatorLayout
from tilelang_cuda.nan_fold import combine_f32

FRAGMENT = "local.fragment"
REDUCE_KINDS = ("sum", "max", "min", "abssum", "absmax")
_PLAIN = {"abssum": "sum", "absmax": "max"}


@dataclass(frozen=True)
class RowLayout:
    """Row ownership of ``m``-row accumulators spread over ``wm`` warps, repeated in each of ``wn`` warp
    columns."""

    m: int
    wm: int
    wn: int = 1

    @classmethod
    def of(cls, acc: AccumulatorLayout) -> RowLayout | None:
        return cls(acc.m, acc.wm, acc.wn)

    def warp_column(self, tid: Any) -> Any:
        return ((tid // 32) // self.wm) % self.wn

    @property
    def slots(self) -> int:
        """Rows each thread owns."""
        return 2 * (self.m // (16 * self.wm))

    def row(self, tid: Any, slot: Any) -> Any:
        """The row held in `slot` by thread `tid`."""
        lane, w_m = tid % 32, (tid // 32) % self.wm
        return (slot // 2) * (16 * self.wm) + w_m * 16 + lane // 4 + (slot % 2) * 8


def slot_of(acc: AccumulatorLayout, r: Any) -> Any:
    """The row-vector slot of accumulator register `r` (see `AccumulatorLayout.position`)."""
    return (r // 4) // acc.ni * 2 + (r // 2) % 2


def register_of(acc: AccumulatorLayout, slot: Any, c: Any) -> Any:
    """The accumulator register holding the `c`-th (``c < 2 * ni``) of the thread's values of row `slot`."""
    return ((slot // 2) * acc.ni + c // 2) * 4 + (slot % 2) * 2 + c % 2


def full_region(region: Any) -> bool:
    """Whether `region` covers its whole buffer."""
    return all(C.is_const(r.min, 0) and C.as_int(r.extent) == C.as_int(s)
               for r, s in zip(region.region, region.source.ty.shape))


def _nonunit(region: Any) -> list[int]:
    return [d for d, r in enumerate(region.region) if not C.is_const(r.extent, 1)]


def _loads(node: Any) -> list[Any]:
    return C.collect(node, tvm.ir.TensorLoad)


def _stores(node: Any) -> list[Any]:
    return C.collect(node, tirx.BufferStore)


class _RowPlan:
    """Candidate row vectors, the row layout each is tied to, links and rejections."""

    def __init__(self, fragments: set[Any], layouts: dict[Any, AccumulatorLayout]):
        self.layouts = layouts
        self.fragments = fragments
        self.cands = {f for f in fragments if f not in layouts and len(f.ty.shape) == 1
                      and C.as_int(f.ty.shape[0]) is not None}
        self.rows: dict[Any, RowLayout] = {}
        self.bad: set[Any] = set()
        self.parent: dict[Any, Any] = {}

    # ---------------------------------------------------------------- union-find over linked vectors
    def find(self, b: Any) -> Any:
        while self.parent.get(b, b) is not b:
            b = self.parent[b]
        return b

    def link(self, bufs: list[Any]) -> None:
        roots = [self.find(b) for b in bufs]
        for r in roots[1:]:
            if r is not roots[0]:
                self.parent[r] = roots[0]

    def tie(self, buf: Any, acc: Any) -> None:
        rows = RowLayout.of(self.layouts[acc])
        if rows is None or rows.m != C.as_int(buf.ty.shape[0]) or self.rows.setdefault(buf, rows) != rows:
            self.bad.add(buf)

    # ---------------------------------------------------------------- uses
    def tile_op(self, name: str, call: Any) -> None:
        args = list(call.args)
        regions = [a for a in args if isinstance(a, tvm.ir.TensorRegion)]
        touched = [a.source for a in args if isinstance(a, (tvm.ir.TensorRegion, tvm.ir.TensorLoad))
                   and a.source in self.cands]
        if not touched:
            return
        ok = False
        if name == "tl.reduce" and len(args) >= 5 and len(regions) >= 2 and args[1].source in self.cands:
            src, dst = args[0], args[1]
            ok = (src.source in self.layouts and full_region(src) and full_region(dst) and C.as_int(args[3]) == 1
                  and str(args[2].value) in REDUCE_KINDS and str(src.source.ty.dtype) == "float32"
                  and str(dst.source.ty.dtype) == "float32" and src.source not in self.cands)
            if ok:
                self.tie(dst.source, src.source)
        elif name == "tl.fill" and isinstance(args[0], tvm.ir.TensorRegion):
            ok = full_region(args[0])
        elif name == "tl.copy" and len(regions) >= 2 and args[0].source in self.cands:
            src, dst = args[0], args[1]
            if dst.source in self.cands:
                ok = full_region(src) and full_region(dst)
                if ok:
                    self.link([src.source, dst.source])
            elif C.scope_of(dst.source) != FRAGMENT:
                dims = _nonunit(dst)
                ok = full_region(src) and len(dims) == 1 and C.as_int(dst.region[dims[0]].extent) == C.as_int(
                    src.source.ty.shape[0])
        if not ok:
            self.bad.update(touched)

    def nest(self, loops: list[Any], body: Any) -> None:
        loads, stores = _loads(body), _stores(body)
        touched = {ld.source for ld in loads if ld.source in self.cands}
        touched |= {st.buffer for st in stores if st.buffer in self.cands}
        if not touched:
            return
        lvars = [lp.loop_var for lp in loops]
        accs = [b for b in self.layouts if any(ld.source.same_as(b) for ld in loads)
                or any(st.buffer.same_as(b) for st in stores)]
        indexed = all(len(ld.indices) == 1 and ld.indices[0].same_as(lvars[0])
                      for ld in loads if ld.source in self.cands)
        indexed = indexed and all(len(st.indices) == 1 and st.indices[0].same_as(lvars[0])
                                  for st in stores if st.buffer in self.cands)
        ok = indexed and all(C.is_const(lp.min, 0) for lp in loops)
        if len(loops) == 2 and accs:
            # an accumulator nest (MMAAccumulators decides whether it runs per register): vectors read only
            ok = ok and not any(st.buffer in self.cands for st in stores)
            if ok:
                for buf in touched:
                    for acc in accs:
                        self.tie(buf, acc)
        elif len(loops) == 1 and not accs:
            others = {ld.source for ld in loads} | {st.buffer for st in stores}
            others = {b for b in others if b in self.fragments and b not in self.cands}
            extent = C.as_int(loops[0].extent)
            ok = ok and not others and all(C.as_int(b.ty.shape[0]) == extent for b in touched)
            if ok:
                self.link(list(touched))
        else:
            ok = False
        if not ok:
            self.bad.update(touched)

    def rest(self, node: Any) -> None:
        self.bad.update(ld.source for ld in _loads(node) if ld.source in self.cands)
        self.bad.update(st.buffer for st in _stores(node) if st.buffer in self.cands)

    def final(self) -> dict[Any, RowLayout]:
        groups: dict[Any, list[Any]] = {}
        for b in self.cands:
            groups.setdefault(self.find(b), []).append(b)
        chosen: dict[Any, RowLayout] = {}
        for members in groups.values():
            rows = {self.rows[b] for b in members if b in self.rows}
            if len(rows) != 1 or any(b in self.bad for b in members):
                continue
            (layout,) = rows
            chosen.update({b: layout for b in members})
        return chosen


def scan_tile_program(body: Any, on_nest: Any, on_tile_op: Any) -> Any:
    """Call ``on_nest(loops, inner)`` for every ``T.Parallel`` nest and ``on_tile_op(name, call)`` for every tile
    op of `body`; returns `body` without them (the rest, where any other use of a buffer shows)."""
    def on_for(loop: Any, mutator: Any) -> Any:
        if C.is_parallel(loop):
            on_nest(*C.parallel_nest(loop))
            return tirx.Evaluate(0)
        return mutator.default_mutate(loop)

    def on_eval(ev: Any, mutator: Any) -> Any:
        found = C.tile_op_of(ev)
        if found is None:
            return ev
        on_tile_op(*found)
        return tirx.Evaluate(0)

    return tvm_ffi.structural_mutate(body, [(tirx.For, on_for), (tirx.Evaluate, on_eval)])


def plan_rows(body: Any, fragments: set[Any], layouts: dict[Any, AccumulatorLayout],
              accumulator_nest_ok: Any) -> dict[Any, RowLayout]:
    """The row vectors of `body` that can follow the rows of the accumulators in `layouts`.

    `accumulator_nest_ok(loops, body)` tells whether MMAAccumulators runs a nest over the thread's registers.
    """
    if not layouts:
        return {}
    plan = _RowPlan(fragments, layouts)

    def on_nest(loops: list[Any], inner: Any) -> None:
        plan.nest(loops, inner)
        if len(loops) == 2 and not accumulator_nest_ok(loops, inner):
            plan.bad.update(ld.source for ld in _loads(inner) if ld.source in plan.cands)

    plan.rest(scan_tile_program(body, on_nest, plan.tile_op))
    return plan.final()


class RowRewriter:
    """Lowers the uses of the chosen row vectors (see the module docstring) for thread `tid`."""

    def __init__(self, rows: dict[Any, RowLayout], tid: Any):
        self.rows = rows
        self.tid = tid
        self.regs = {b: tirx.decl_buffer((lay.slots,), str(b.ty.dtype), name=f"{b.name}_rows", scope="local")
                     for b, lay in rows.items()}

    def per_slot(self, layout: RowLayout, make: Any) -> Any:
        s = tirx.Var("s", "int32")
        return tirx.For(s, 0, layout.slots, tirx.ForKind.UNROLLED, make(s))

    def alloc(self, buf: Any) -> Any:
        return tirx.AllocBuffer(self.regs[buf])

    def touches(self, body: Any) -> bool:
        return any(ld.source in self.rows for ld in _loads(body)) or any(st.buffer in self.rows
                                                                       for st in _stores(body))

    def map_slot(self, node: Any, slot: Any) -> Any:
        """`node` with every row-vector access ``v[i]`` turned into ``v_rows[slot]``."""
        def on_load(ld: Any) -> Any:
            return tirx.BufferLoad(self.regs[ld.source], [slot]) if ld.source in self.rows else ld

        def on_store(st: Any) -> Any:
            return tirx.BufferStore(self.regs[st.buffer], st.value, [slot]) if st.buffer in self.rows else st

        return tvm_ffi.structural_map(node, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])

    def nest(self, loops: list[Any], body: Any) -> Any:
        """A ``T.Parallel(M)`` nest over row vectors: one iteration per slot."""
        layout = next(self.rows[b] for b in self.rows if any(ld.source.same_as(b) for ld in _loads(body))
                      or any(st.buffer.same_as(b) for st in _stores(body)))
        return self.per_slot(layout, lambda s: C.substitute(self.map_slot(body, s),
                                                            {loops[0].loop_var: layout.row(self.tid, s)}))

    def tile_op(self, name: str, call: Any, acc_regs: dict[Any, Any],
                acc_layouts: dict[Any, AccumulatorLayout]) -> Any | None:
        """The lowering of a tile op on row vectors, or None when it touches none."""
        args = list(call.args)
        if name == "tl.reduce" and args[1].source in self.rows:
            return self.reduce(args, acc_regs[args[0].source], acc_layouts[args[0].source])
        if name == "tl.fill" and args[0].source in self.rows:
            buf = args[0].source
            value = cast_to(str(buf.ty.dtype), args[1])
            return self.per_slot(self.rows[buf], lambda s: tirx.BufferStore(self.regs[buf], value, [s]))
        if name == "tl.copy" and args[0].source in self.rows:
            src, dst = args[0].source, args[1]
            if dst.source in self.rows:
                dtype = str(dst.source.ty.dtype)
                return self.per_slot(self.rows[src], lambda s: tirx.BufferStore(
                    self.regs[dst.source], cast_to(dtype, tirx.BufferLoad(self.regs[src], [s])), [s]))
            return self.copy_out(src, dst)
        return None

    def copy_out(self, src: Any, dst: Any) -> Any:
        layout, (dim,) = self.rows[src], _nonunit(dst)
        dtype = str(dst.source.ty.dtype)

        def body(s: Any) -> Any:
            idx = [r.min for r in dst.region]
            idx[dim] = C.add(idx[dim], layout.row(self.tid, s))
            store = tirx.BufferStore(dst.source, cast_to(dtype, tirx.BufferLoad(self.regs[src], [s])), idx)
            ana = tvm.sym.Analyzer()
            conds = [i < n for i, n in zip(idx, dst.source.ty.shape) if not ana.can_prove(i < n)]
            if layout.wn > 1:  # every warp column holds the row: the first stores it
                conds.append(layout.warp_column(self.tid) == 0)
            for cond in conds:
                store = tirx.IfThenElse(cond, store, None)
            return store

        return self.per_slot(layout, body)

    def reduce(self, args: list[Any], acc: Any, acc_layout: AccumulatorLayout) -> Any:
        dst = args[1].source
        kind, clear = str(args[2].value), bool(C.as_int(args[4]))
        plain = _PLAIN.get(kind, kind)
        out = self.regs[dst]
        part = tirx.decl_buffer((1,), "float32", name="row_part", scope="local")
        cols = 2 * acc_layout.ni  # registers of one row per thread

        layout = self.rows[dst]
        cur = tirx.BufferLoad(part, [0])

        def quad_row(s: Any) -> list[Any]:
            """The row's partial of this quad (its warp column's columns) in ``part``."""
            c = tirx.Var("c", "int32")
            r = register_of(acc_layout, s, c)
            steps = [tirx.BufferStore(part, identity_value(kind, "float32"), [0]),
                     tirx.For(c, 0, cols, tirx.ForKind.UNROLLED,
                              tirx.BufferStore(part, combine_f32(kind, cur, tirx.BufferLoad(acc, [r])), [0]))]
            for mask in (1, 2):
                steps.append(tirx.BufferStore(part, combine_f32(plain, cur, tirx.call_extern(
                    "float32", "tl_shfl_xor", cur, mask)), [0]))
            return steps

        def finish(s: Any, total: Any) -> Any:
            return tirx.BufferStore(out, total if clear else combine_f32(plain, tirx.BufferLoad(out, [s]), total),
                                    [s])

        if layout.wn == 1:
            return C.seq([tirx.AllocBuffer(part),
                          self.per_slot(layout, lambda s: C.seq([*quad_row(s), finish(s, cur)]))])
        # the warp columns' partials meet in shared memory: one per (warp column, row), written by lane 0 of a quad
        scratch = tirx.decl_buffer((layout.wn * layout.m,), "float32", name="row_partials", scope="shared")
        column = layout.warp_column(self.tid)

        def publish(s: Any) -> Any:
            store = tirx.BufferStore(scratch, cur, [column * layout.m + layout.row(self.tid, s)])
            return C.seq([*quad_row(s), tirx.IfThenElse(self.tid % 4 == 0, store, None)])

        def gather(s: Any) -> Any:
            row = layout.row(self.tid, s)
            total = tirx.BufferLoad(scratch, [row])
            for j in range(1, layout.wn):
                total = combine_f32(plain, total, tirx.BufferLoad(scratch, [j * layout.m + row]))
            return finish(s, total)

        return C.seq([tirx.AllocBuffer(part), tirx.AllocBuffer(scratch), self.per_slot(layout, publish),
                      self.per_slot(layout, gather)])


def cast_to(dtype: str, value: Any) -> Any:
    """`value` (an expression or a Python number) as `dtype`."""
    if isinstance(value, (int, float)):
        return tirx.const(value, dtype)
    return value if str(value.ty.dtype if hasattr(value, "ty") else value.dtype) == dtype else tirx.Cast(dtype, value)
