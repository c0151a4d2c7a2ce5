"""``tl.gemm`` on Apple GPUs: 8x8 simdgroup matrices (``simdgroup_multiply_accumulate``).

The block's simdgroups split C into a ``wm x wn`` grid of rectangles of 8x8 tiles. C travels once per call
through a threadgroup tile (the fragment keeps core's thread layout outside the gemm): each simdgroup loads its
C tiles (or fills them with zero), walks K in steps of 8 loading A and B tiles straight from threadgroup memory
(``simdgroup_load`` transposes for ``trans_A`` / ``trans_B``) and stores C back. fp16, bf16 and fp32 operands
(bf16 stays native ``bfloat`` under the ``native_bf16`` pipeline option and runs on ``simdgroup_bfloat8x8``), fp32
or fp16 accumulators; M, N, K multiples of 8; A and B in shared memory or fragments (staged). A C tile in
threadgroup memory is read and written in place (`lower_gemm_threadgroup_c`); an accumulator that is only
cleared, multiplied into and copied out never reaches this lowering: `tilelang_metal.passes.simdgroup_accumulators`
keeps it in simdgroup matrices for the whole kernel.

Threadgroup memory is 32 KiB on Apple GPUs, so the staging is sized by what the kernel's own shared tiles leave
(`threadgroup_budget`, at most `TG_BUDGET`): C goes through threadgroup memory in chunks of ``span`` rows, and a
fragment A (flash attention's P @ V) is staged one chunk of rows at a time beside it, both within the budget;
only a fragment B is staged whole.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.sdk import TileOpImpl, dtype_bytes, gemm_operands, operand_index
from tilelang.transform import utils as C
from tilelang_metal._tile import (
    SIMD_WIDTH,
    THREADGROUP_SCOPES,
    barrier,
    const_ints,
    in_threadgroup,
    row_length,
    simd_ids,
    threadgroup_budget,
)

OPERAND_DTYPES = ("float16", "float32", "bfloat16")
ACCUM_DTYPES = ("float16", "float32")
MAX_ACCUMULATORS = 16  # 8x8 C matrices a simdgroup holds at once (2 registers each per thread for fp32)
TG_BUDGET = 16 * 1024  # most bytes of one staging chunk (C rows, plus A rows for a fragment A)
_SCOPE = "metal.simdgroup"


def _shape(ctx: Any) -> tuple[int, int, int] | None:
    a, _, c, ta, _, _ = gemm_operands(ctx)
    dims = const_ints([c.region[-2].extent, c.region[-1].extent,
                       a.region[-2].extent if ta else a.region[-1].extent])
    return None if dims is None else (dims[0], dims[1], dims[2])


def applies(ctx: Any) -> bool:
    """Simdgroup matrices fit: dtypes, 8-multiples, whole simdgroups, C a fragment, A/B neither per-thread nor
    global (staging a whole global tensor in threadgroup memory does not fit; Metal 4 reads it directly)."""
    if not ctx.has_threads or ctx.num_threads % SIMD_WIDTH:
        return False
    try:
        a, b, c, *_ = gemm_operands(ctx)
        shape = _shape(ctx)
    except Exception:
        return False
    in_dt, b_dt, acc = str(a.source.ty.dtype), str(b.source.ty.dtype), str(c.source.ty.dtype)
    if in_dt != b_dt or in_dt not in OPERAND_DTYPES or acc not in ACCUM_DTYPES:
        return False
    if in_dt != "float16" and acc != "float32":
        return False
    if shape is None or any(d % 8 for d in shape):
        return False
    if C.scope_of(c.source) not in ("local.fragment", *THREADGROUP_SCOPES) or const_ints(c.source.ty.shape) is None:
        return False
    return all(C.scope_of(r.source) not in ("local", "global") and const_ints(r.source.ty.shape) is not None
               for r in (a, b))


def warp_grid(tiles_m: int, tiles_n: int, warps: int, policy: int = 0) -> tuple[int, int]:
    """``(wm, wn)``: how many simdgroups split the M and N tiles (each divides its tile count, wm*wn <= warps).

    The most simdgroups win; among those, the most square per-simdgroup block (policy 1 = FullRow prefers
    splitting M, 2 = FullCol prefers N).
    """
    best: tuple[Any, ...] | None = None
    for wm in range(1, warps + 1):
        for wn in range(1, warps // wm + 1):
            if tiles_m % wm or tiles_n % wn:
                continue
            tm, tn = tiles_m // wm, tiles_n // wn
            lean = {1: -wm, 2: -wn}.get(policy, 0)
            key = (-(wm * wn), lean, abs(tm - tn), wm)
            if best is None or key < best[0]:
                best = (key, wm, wn)
    assert best is not None
    return best[1], best[2]


def _k_step(a: Any, b: Any, regs: tuple[Any, Any, Any], a_row: Any, col0: Any, ta: bool, tb: bool, tn: int,
            rows_per_pass: int, kk: Any) -> Any:
    """One 8-wide K step of a simdgroup GEMM pass: load `rows_per_pass` A tiles from row `a_row`, `tn` B tiles from
    column `col0`, and multiply-accumulate into the C registers (``regs = (a_reg, b_reg, c_reg)``)."""
    from tvm import tirx

    from tilelang.transform import utils as C

    a_reg, b_reg, c_reg = regs

    def load_a(i: Any) -> Any:
        ptr, ld = _ptr(a, a_row + i * 8, kk * 8, ta)
        return _intrin("simdgroup_load", a_reg, i, ptr, ld, 8, 8, tirx.const(ta, "bool"))

    def load_b(j: Any) -> Any:
        ptr, ld = _ptr(b, kk * 8, col0 + j * 8, tb)
        return _intrin("simdgroup_load", b_reg, j, ptr, ld, 8, 8, tirx.const(tb, "bool"))

    def mma(i: Any) -> Any:
        return _unrolled(tn, "j", lambda j: _intrin(
            "simdgroup_multiply_accumulate", c_reg, i * tn + j, a_reg, i, b_reg, j, c_reg, i * tn + j))

    return C.seq([_unrolled(rows_per_pass, "i", load_a), _unrolled(tn, "j", load_b),
                  _unrolled(rows_per_pass, "i", mma)])


def _unrolled(n: int, name: str, body: Any) -> Any:
    v = tirx.Var(name, "int32")
    return tirx.For(v, 0, n, tirx.ForKind.UNROLLED, body(v))


def _ptr(region: Any, row: Any, col: Any, trans: bool) -> tuple[Any, int]:
    """The address of logical element (row, col) of an operand and its buffer's row length."""
    buf = region.source
    return tirx.address_of(tirx.BufferLoad(buf, operand_index(region, row, col, trans))), row_length(buf)


def _intrin(name: str, *args: Any) -> Any:
    return tirx.Evaluate(tirx.call_intrin("void", f"tirx.{name}", *args))


def _stage_by_rows(region: Any, trans: bool) -> bool:
    """A fragment A read untransposed over its whole 2-D buffer: it can be staged one chunk of rows at a time."""
    buf = region.source
    shape = const_ints(buf.ty.shape)
    return (not trans and C.scope_of(buf) not in THREADGROUP_SCOPES and shape is not None and len(shape) == 2
            and all(C.is_const(r.min, 0) for r in region.region)
            and const_ints([r.extent for r in region.region]) == shape)


def lower_gemm(ctx: Any) -> Any:
    if C.scope_of(ctx.region(2).source) in THREADGROUP_SCOPES:
        return lower_gemm_threadgroup_c(ctx)
    a, b, c, ta, tb, clear = gemm_operands(ctx)
    m, n, k = _shape(ctx)  # type: ignore[misc]
    chunk_a = _stage_by_rows(a, ta)
    a_src = a
    pre_a: list[Any] = []
    if not chunk_a:
        pre_a, a = in_threadgroup(a)
    pre_b, b = in_threadgroup(b)
    in_dt, acc = str(a.source.ty.dtype), str(c.source.ty.dtype)
    warps = ctx.num_threads // SIMD_WIDTH
    row_bytes = n * (4 if acc == "float32" else 2) + (k * dtype_bytes(in_dt) if chunk_a else 0)
    # C (and a fragment A) go through threadgroup memory in chunks of `span` rows that fit the budget
    budget = threadgroup_budget(ctx, TG_BUDGET)
    span = max([r for r in range(8, m + 1, 8) if m % r == 0 and r * row_bytes <= budget] or [8])
    chunks = m // span
    m = span
    if chunk_a:  # this chunk's rows of A, refilled per chunk (row `ch * span + r` of A is row `r` here)
        a_buf = tirx.decl_buffer((span, k), str(a_src.source.ty.dtype), name=f"{a_src.source.name}_tg",
                                 scope="shared.dyn")
        a = tirx.BufferRegion(a_buf, [tvm.ir.Range.from_min_extent(0, span), tvm.ir.Range.from_min_extent(0, k)])
    wm, wn = warp_grid(m // 8, n // 8, warps, ctx.int_arg(5))
    tm, tn = m // 8 // wm, n // 8 // wn
    rows_per_pass = max(d for d in range(1, tm + 1) if tm % d == 0 and d * tn <= max(MAX_ACCUMULATORS, tn))
    passes = tm // rows_per_pass

    name = str(c.source.name)
    ch = tirx.Var("ch", "int32")
    c_tg = tirx.decl_buffer((m, n), acc, name=f"{name}_tg", scope="shared.dyn")
    c_reg = tirx.decl_buffer((rows_per_pass * tn * 64,), acc, name=f"{name}_sg", scope=_SCOPE)
    a_reg = tirx.decl_buffer((rows_per_pass * 64,), in_dt, name=f"{name}_sga", scope=_SCOPE)
    b_reg = tirx.decl_buffer((tn * 64,), in_dt, name=f"{name}_sgb", scope=_SCOPE)
    c_whole = tirx.BufferRegion(c_tg, [tvm.ir.Range.from_min_extent(0, m), tvm.ir.Range.from_min_extent(0, n)])
    warp, _ = simd_ids(ctx)
    if wm * wn < warps:  # spare simdgroups repeat a busy one's work (same values): no divergent barriers
        warp = tirx.floormod(warp, wm * wn)
    wr, wc = tirx.floordiv(warp, wn), tirx.floormod(warp, wn)
    no = tirx.const(False, "bool")

    def one_pass(p: Any) -> Any:
        row0 = (wr * tm + p * rows_per_pass) * 8
        col0 = wc * tn * 8

        def c_tile(i: Any, j: Any) -> tuple[Any, int]:
            return _ptr(c_whole, row0 + i * 8, col0 + j * 8, False)

        def init(i: Any) -> Any:
            def per_col(j: Any) -> Any:
                idx = i * tn + j
                if clear:
                    return _intrin("make_filled_simdgroup_matrix", c_reg, idx, tirx.const(0, acc), 8, 8)
                ptr, ld = c_tile(i, j)
                return _intrin("simdgroup_load", c_reg, idx, ptr, ld, 8, 8, no)
            return _unrolled(tn, "j", per_col)

        def k_step(kk: Any) -> Any:
            return _k_step(a, b, (a_reg, b_reg, c_reg), (0 if chunk_a else ch * span) + row0, col0, ta, tb, tn,
                           rows_per_pass, kk)

        def store(i: Any) -> Any:
            def per_col(j: Any) -> Any:
                ptr, ld = c_tile(i, j)
                return _intrin("simdgroup_store", c_reg, i * tn + j, ptr, ld, 8, 8, no)
            return _unrolled(tn, "j", per_col)

        kk = tirx.Var("kk", "int32")
        return C.seq([_unrolled(rows_per_pass, "i", init), tirx.For(kk, 0, k // 8, tirx.ForKind.SERIAL, k_step(kk)),
                      _unrolled(rows_per_pass, "i", store)])

    p = tirx.Var("p", "int32")
    simd = C.seq([tirx.AllocBuffer(c_reg), tirx.AllocBuffer(a_reg), tirx.AllocBuffer(b_reg),
                  tirx.For(p, 0, passes, tirx.ForKind.SERIAL, one_pass(p))])

    def c_index(vs: list[Any]) -> list[Any]:
        return operand_index(c, vs[0], vs[1], False)

    def chunk_nest(make: Any) -> Any:
        """A nest over all of C (so it keeps the fragment's thread layout) touching the rows of chunk `ch`."""
        def body(vs: list[Any]) -> Any:
            stmt = make(vs, [vs[0] - ch * span, vs[1]])
            return stmt if chunks == 1 else tirx.IfThenElse(
                tirx.And(vs[0] >= ch * span, vs[0] < ch * span + span), stmt, None)
        return C.make_parallel_nest([m * chunks, n], body)

    stmts = []
    if chunk_a:
        src = a_src.source
        stmts.append(C.make_parallel_nest([span * chunks, k], lambda vs: tirx.IfThenElse(
            tirx.And(vs[0] >= ch * span, vs[0] < ch * span + span),
            tirx.BufferStore(a.source, tirx.BufferLoad(src, vs), [vs[0] - ch * span, vs[1]]), None)
            if chunks > 1 else tirx.BufferStore(a.source, tirx.BufferLoad(src, vs), vs)))
    if not clear:
        stmts.append(chunk_nest(lambda vs, loc: tirx.BufferStore(c_tg, tirx.BufferLoad(c.source, c_index(vs)), loc)))
    # simdgroup_load / simdgroup_store reach the staged tiles through pointers, which barrier analysis does not
    # order against the fills and the read-back: the barriers are explicit
    stmts += [barrier(), simd, barrier()]
    stmts.append(chunk_nest(lambda vs, loc: tirx.BufferStore(c.source, tirx.BufferLoad(c_tg, loc), c_index(vs))))
    loop = tirx.For(ch, 0, chunks, tirx.ForKind.SERIAL, C.seq(stmts))
    allocs = [tirx.AllocBuffer(a.source)] if chunk_a else []
    return C.seq([*pre_a, *pre_b, *allocs, tirx.AllocBuffer(c_tg), loop])


def lower_gemm_threadgroup_c(ctx: Any) -> Any:
    """C in threadgroup memory: each simdgroup loads (or zero-fills) its C tiles in passes of at most
    `MAX_ACCUMULATORS` matrices, walks K and stores them back in place; no staging copy of C."""
    a, b, c, ta, tb, clear = gemm_operands(ctx)
    m, n, k = _shape(ctx)  # type: ignore[misc]
    pre_a, a = in_threadgroup(a)
    pre_b, b = in_threadgroup(b)
    in_dt, acc = str(a.source.ty.dtype), str(c.source.ty.dtype)
    warps = ctx.num_threads // SIMD_WIDTH
    wm, wn = warp_grid(m // 8, n // 8, warps, ctx.int_arg(5))
    tm, tn = m // 8 // wm, n // 8 // wn
    rows_per_pass = max(d for d in range(1, tm + 1) if tm % d == 0 and d * tn <= max(MAX_ACCUMULATORS, tn))
    name = str(c.source.name)
    c_reg = tirx.decl_buffer((rows_per_pass * tn * 64,), acc, name=f"{name}_sg", scope=_SCOPE)
    a_reg = tirx.decl_buffer((rows_per_pass * 64,), in_dt, name=f"{a.source.name}_sg", scope=_SCOPE)
    b_reg = tirx.decl_buffer((tn * 64,), in_dt, name=f"{b.source.name}_sg", scope=_SCOPE)
    warp, _ = simd_ids(ctx)
    busy = wm * wn < warps
    if busy:  # spare simdgroups sit out: C is read and written in place, a repeated pass would race with it
        active = warp < wm * wn
        warp = tirx.floormod(warp, wm * wn)
    wr, wc = tirx.floordiv(warp, wn), tirx.floormod(warp, wn)
    no = tirx.const(False, "bool")

    def one_pass(p: Any) -> Any:
        row0 = (wr * tm + p * rows_per_pass) * 8
        col0 = wc * tn * 8

        def c_tile(i: Any, j: Any) -> tuple[Any, int]:
            return _ptr(c, row0 + i * 8, col0 + j * 8, False)

        def init(i: Any) -> Any:
            def per_col(j: Any) -> Any:
                if clear:
                    return _intrin("make_filled_simdgroup_matrix", c_reg, i * tn + j, tirx.const(0, acc), 8, 8)
                ptr, ld = c_tile(i, j)
                return _intrin("simdgroup_load", c_reg, i * tn + j, ptr, ld, 8, 8, no)
            return _unrolled(tn, "j", per_col)

        def k_step(kk: Any) -> Any:
            return _k_step(a, b, (a_reg, b_reg, c_reg), row0, col0, ta, tb, tn, rows_per_pass, kk)

        def store(i: Any) -> Any:
            def per_col(j: Any) -> Any:
                ptr, ld = c_tile(i, j)
                return _intrin("simdgroup_store", c_reg, i * tn + j, ptr, ld, 8, 8, no)
            return _unrolled(tn, "j", per_col)

        kk = tirx.Var("kk", "int32")
        return C.seq([_unrolled(rows_per_pass, "i", init), tirx.For(kk, 0, k // 8, tirx.ForKind.SERIAL, k_step(kk)),
                      _unrolled(rows_per_pass, "i", store)])

    p = tirx.Var("p", "int32")
    work: Any = tirx.For(p, 0, tm // rows_per_pass, tirx.ForKind.SERIAL, one_pass(p))
    if busy:
        work = tirx.IfThenElse(active, work, None)
    # the simdgroup loads and stores reach the tiles through pointers, which barrier analysis does not order
    # against the threads' own accesses: the barriers are explicit
    return C.seq([*pre_a, *pre_b, tirx.AllocBuffer(c_reg), tirx.AllocBuffer(a_reg), tirx.AllocBuffer(b_reg),
                  barrier(), work, barrier()])


GEMM = TileOpImpl("tl.gemm", "metal_simdgroup", lower_gemm, applies=applies, priority=10)
