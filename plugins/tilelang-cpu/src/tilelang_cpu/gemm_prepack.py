"""Pack gemm operand B once per kernel call, before the block grid, instead of once per block and K step.

Every block of a tiled GEMM packs its ``K x block_N`` slice of B into column panels; the blocks of one column of
the grid pack the same slice again (``M / block_M`` times), and each pack reads rows of B that lie a page apart,
one cache miss per line that the hardware prefetchers do not cover. When B is a kernel parameter that the kernel
never writes and the grid reads it at least twice over, the gemm lowering instead emits one pack of the whole
tensor into panels (``Bp[p, k, j] = fp32(op(B)[k, p * NR + j])``, each panel ``K x NR`` contiguous) marked
``HOIST``, and its micro-kernel reads the panels in place. `hoist_block_invariants` (called by
`LowerLaunchToCPU`) moves the marked allocation and pack in front of the block loop and runs the pack as a
parallel loop over whole rows of B (streaming reads). Transposed or half-precision B is converted once as well.

Kept per block (no hoisting) unless: B is a 2-D parameter with constant shape, never written; the gemm's first
B column is provably a multiple of NR (panels align with micro tiles); the grid has a block launch and reads B
at least twice over (blocks x block width >= 2 x N); the packed copy fits ``tl.cpu.gemm_prepack_limit`` bytes
(default 64 MiB; 0 turns the rewrite off).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

HOIST = "tl_cpu.hoist_out_of_blocks"  # AttrStmt key / AllocBuffer annotation: run once, before the block loop
_ROWS_PER_TASK = 16  # rows of B per parallel task of the pack


class WholeB(NamedTuple):
    """B packed once before the grid: the statements to emit, the addressing, the prefetch of the next slice."""

    stmts: list[Any]
    b_at: Any
    fetch: Any


def eligible(ctx: Any, region: Any, reuse_dim: int, packed_bytes: int) -> bool:
    """Whether operand `region` may be replaced by a copy of its whole tensor made before the grid: a 2-D
    constant-shape parameter the kernel never writes, a block launch whose blocks read it at least twice over
    along `reuse_dim` (blocks x region extent >= 2 x tensor extent), a copy of at most the configured limit."""
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import PREPACK_LIMIT, config
    from tilelang_cpu.passes.elide_tile_copies import _Uses

    limit = int(config(PREPACK_LIMIT, 64 << 20))
    src, func = region.source, ctx.func
    if limit <= 0 or packed_bytes > limit or func is None or len(src.ty.shape) != 2 or C.scope_of(src) != "global":
        return False
    if not any(p.same_as(src) for p in func.params) or _Uses(func.body).written(src):
        return False
    blocks = [C.as_int(e) for t, (_, e) in C.launch_extents(func).items() if t.startswith("blockIdx")]
    extent, total = C.as_int(region.region[reuse_dim].extent), C.as_int(src.ty.shape[reuse_dim])
    return (bool(blocks) and all(x is not None for x in blocks) and None not in (extent, total)
            and math.prod(blocks) * extent >= 2 * total)


def hoisted(buf: Any, pack: Any) -> list[Any]:
    import tvm
    from tvm import tirx

    return [tirx.AllocBuffer(buf, annotations={HOIST: 1}), tirx.AttrStmt(buf.data, HOIST, tvm.tirx.const(0, "int32"),
                                                                          pack)]


def whole_a_fp32(ctx: Any, a: Any) -> tuple[list[Any], Any] | None:
    """``(statements, region)``: a half-precision A converted to fp32 once before the grid (same shape, so the
    region keeps its indices), or None (fp32 A, or the conditions of the module docstring fail)."""
    from tvm import tirx

    from tilelang.backend.sdk import tileop_utils
    from tilelang.transform import utils as C

    src = a.source
    if str(src.ty.dtype) == "float32" or len(src.ty.shape) != 2:
        return None
    rows, cols = (C.as_int(s) for s in src.ty.shape)
    if rows is None or cols is None or not eligible(ctx, a, -2, rows * cols * 4):
        return None
    wide = tirx.decl_buffer([rows, cols], "float32", name=f"{src.name}_fp32", scope="global", data_alignment=64)
    task, r, j = (tirx.Var(x, "int32") for x in ("task", "r", "j"))
    row = task * _ROWS_PER_TASK + r
    body = tirx.BufferStore(wide, tileop_utils.cast("float32", tirx.BufferLoad(src, [row, j])), [row, j])
    tasks, extra = divmod(rows, _ROWS_PER_TASK)
    if extra:
        tasks += 1
        body = tirx.IfThenElse(row < rows, body, None)
    serial = tirx.ForKind.SERIAL
    pack = tirx.For(task, 0, tasks, serial, tirx.For(r, 0, _ROWS_PER_TASK, serial, tirx.For(j, 0, cols, serial,
                                                                                              body)))
    return hoisted(wide, pack), tirx.BufferRegion(wide, list(a.region))


def whole_b_panels(ctx: Any, b: Any, trans: bool, k: int, nr: int, vector: bool, strips: int,
                   panels_in_call: int) -> WholeB | None:
    """B packed whole into panels of width `nr` before the grid, or None when the conditions of the module
    docstring fail. ``b_at(j0, j, kk, width)`` addresses ``op(B)[kk, j0 + j]`` of the call's region in the packed
    copy; the prefetch brings the slice of panels the call reads next (the next panel, or the first one of the
    next K step) into L2 while the `strips` row strips of the current panel run."""
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_prefetch import next_panel_slice

    src = b.source
    if len(src.ty.shape) != 2:
        return None
    rows, cols = (C.as_int(s) for s in src.ty.shape)
    if rows is None or cols is None:
        return None
    k_total, n_total = (cols, rows) if trans else (rows, cols)
    panels = -(-n_total // nr)
    if not eligible(ctx, b, -2 if trans else -1, panels * nr * k_total * 4):
        return None
    nmin = b.region[-2 if trans else -1].min
    kmin = b.region[-1 if trans else -2].min
    if not ctx.analyzer.can_prove(tirx.floormod(nmin, nr) == 0):
        return None

    packed = tirx.decl_buffer([panels * k_total * nr], "float32", name=f"{src.name}_panels", scope="global",
                              data_alignment=64)
    stmts = hoisted(packed, _pack_all(src, trans, k_total, n_total, nr, packed, vector))

    def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
        panel = tirx.floordiv(nmin + j0, nr)
        return packed, [panel * (k_total * nr) + (kmin + kk) * nr + j]

    return WholeB(stmts, b_at, next_panel_slice(packed, nmin, kmin, k, nr, k_total, strips, panels_in_call))


def _pack_all(src: Any, trans: bool, k_total: int, n_total: int, nr: int, dst: Any, vector: bool) -> Any:
    """The pack loop of the whole tensor; its outermost loop is the one `hoist_block_invariants` makes parallel.

    Plain B: tasks of `_ROWS_PER_TASK` whole rows, each row split into the panels (contiguous reads, one write
    stream per panel). Transposed B (``B[n, k]``): one task per panel, each of its rows read along K.
    """
    from tvm import tirx

    from tilelang.backend.sdk import tileop_utils
    from tilelang.transform import utils as C

    serial = tirx.ForKind.SERIAL
    full, tail = divmod(n_total, nr)

    def loop(var: Any, extent: int, kind: Any, body: Any) -> Any:
        return tirx.For(var, 0, extent, kind, body)

    def element(kr: Any, col: Any, panel: Any, j: Any) -> Any:
        value = tirx.BufferLoad(src, [col, kr] if trans else [kr, col])
        return tirx.BufferStore(dst, tileop_utils.cast("float32", value), [panel * (k_total * nr) + kr * nr + j])

    if trans:
        # one task per panel; K in blocks of one cache line, so both the reads (rows of B along K) and the
        # writes (a block of the panel) stay within a few lines at a time
        p, j, kb, kr = (tirx.Var(x, "int32") for x in ("p", "j", "kb", "kr"))
        step = 16
        kblocks = -(-k_total // step)
        col = p * nr + j
        krow = kb * step + kr
        conds = [c for c, needed in ((col < n_total, bool(tail)), (krow < k_total, k_total % step != 0)) if needed]
        body = element(krow, col, p, j)
        for cond in conds:
            body = tirx.IfThenElse(cond, body, None)
        return loop(p, full + (1 if tail else 0), serial,
                    loop(kb, kblocks, serial, loop(j, nr, serial, loop(kr, step, serial, body))))

    task, r = tirx.Var("task", "int32"), tirx.Var("r", "int32")
    kr = task * _ROWS_PER_TASK + r
    vec = tirx.ForKind.VECTORIZED if vector and nr & (nr - 1) == 0 else serial
    stmts = []
    if full:
        p, j = tirx.Var("p", "int32"), tirx.Var("j", "int32")
        stmts.append(loop(p, full, serial, loop(j, nr, vec, element(kr, p * nr + j, p, j))))
    if tail:
        j = tirx.Var("j", "int32")
        stmts.append(loop(j, tail, serial, element(kr, full * nr + j, full, j)))
    row = C.seq(stmts)
    tasks, extra = divmod(k_total, _ROWS_PER_TASK)
    if extra:
        tasks += 1
        row = tirx.IfThenElse(kr < k_total, row, None)
    return loop(task, tasks, serial, loop(r, _ROWS_PER_TASK, serial, row))


def hoist_block_invariants(body: Any, bound: list[Any]) -> tuple[Any, list[Any]]:
    """``(body without the HOIST-marked statements, those statements to run before the block loop)``.

    A marked allocation moves with its pack; a pack whose statement reads any variable in `bound` (the launch
    and loop variables of the block body) stays where it is. The outermost loop of a moved pack becomes parallel.
    """
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    marked = C.collect(body, tirx.AttrStmt, lambda s: str(s.attr_key) == HOIST)
    if not marked:
        return body, []
    bound = bound + [lp.loop_var for lp in C.collect(body, tirx.For)]
    bound += [b.var for b in C.collect(body, tirx.Bind)]
    moved: list[Any] = []
    for attr in marked:
        own = [lp.loop_var for lp in C.collect(attr.body, tirx.For)] + [b.var for b in C.collect(attr.body, tirx.Bind)]
        if C.uses_var(attr.body, [v for v in bound if not any(v.same_as(o) for o in own)]):
            continue
        pack = attr.body
        if isinstance(pack, tirx.For):
            pack = tirx.For(pack.loop_var, pack.min, pack.extent, tirx.ForKind.PARALLEL, pack.body,
                            pack.thread_binding, pack.annotations)
        moved.append((attr, pack))
    # the pack's destination: its AttrStmt node may no longer be the allocation's data var after earlier passes
    written = [st.buffer for _, pack in moved for st in C.collect(pack, tirx.BufferStore)]

    def movable(buf: Any) -> bool:
        return any(buf.same_as(w) for w in written)

    allocs = [a for a in C.allocations(body) if a.annotations and HOIST in a.annotations]
    hoisted = [tirx.AllocBuffer(a.buffer) for a in allocs if movable(a.buffer)]
    hoisted += [pack for _, pack in moved]
    pack_ids = [attr for attr, _ in moved]

    def on_attr(s: Any) -> Any:
        if str(s.attr_key) != HOIST:
            return s
        return tirx.Evaluate(0) if any(s.same_as(x) for x in pack_ids) else s.body

    def on_alloc(a: Any) -> Any:
        if not (a.annotations and HOIST in a.annotations):
            return a
        return tirx.Evaluate(0) if movable(a.buffer) else tirx.AllocBuffer(a.buffer)

    body = tvm_ffi.structural_map(body, [(tirx.AttrStmt, on_attr), (tirx.AllocBuffer, on_alloc)])
    return body, hoisted
