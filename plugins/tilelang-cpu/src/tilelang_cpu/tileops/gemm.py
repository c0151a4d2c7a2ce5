"""``tl.gemm`` on the CPU as a register-blocked, vectorised micro-kernel (priority 2, llvm target).

A block is one CPU thread, so the whole C tile is ours. The tile is cut into ``MR x NR`` micro tiles chosen for
the target's vector registers (`tilelang_cpu.gemm_plan`): 6x64 fp32 on AVX-512 (24 of 32 zmm accumulate, 4 hold
a row of B, 1 a broadcast of A), 6x16 on AVX2 (12 + 2 + 1 of 16 ymm), 6x16 on NEON. Per micro tile::

    acc[MR, NR] (one stack buffer per row: LLVM keeps it in vector registers)  <- 0 or C tile
    for k in range(K):                     # the whole K of the call, innermost over the micro tile
        [one prefetch every few k]         # tilelang_cpu.gemm_prefetch
        for i in unroll(MR):
            for j in vectorized(NR):       # NR / lanes FMAs with A[i, k] broadcast
                acc[i, j] += A[i, k] * B[k, j]
    C tile <- acc

Micro tiles walk B's column panels outermost (a ``K x NR`` panel of B is reused by every row strip of A).
Tails: rows past the last full strip run a second kernel with ``M % MR`` rows; a last panel narrower than NR is a
vector of that width.

Operands: A is read in place (one scalar per row and k), or from an fp32 copy when it is half precision -- made
once before the grid (`tilelang_cpu.gemm_prepack.whole_a_fp32`), else per call. B is read from ``K x NR``
column panels, each contiguous (element ``[k, j]`` at ``k * NR + j``): packed once before the grid for the whole
tensor when the grid rereads B (`tilelang_cpu.gemm_prepack`), else per call into block-local scratch while the
micro-kernel prefetches the next K step's tile. ``tl.cpu.gemm_pack_b=False`` reads an fp32 B from wherever the
program put it (its tile copy) instead. Instances it does not handle (threads per block > 1, non-constant extents,
C not fp32, other input dtypes) fall back to the lower-priority implementations.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl
from tilelang_cpu.gemm_plan import MicroShape, micro_shape
from tilelang_cpu.gemm_prefetch import Prefetch
from tilelang_cpu.tileops.common import loop as _loop
from tilelang_cpu.tileops.common import scratch as _scratch

__all__ = ["IMPLS", "MicroShape", "lower_gemm_micro", "micro_shape"]

_INPUT_DTYPES = ("float32", "float16", "bfloat16")


def _vector_facts(target_text: str) -> tuple[int, int]:
    """``(fp32 lanes per vector register, vector register count)`` of an llvm target (see `tilelang_cpu.isa`)."""
    from tilelang_cpu.isa import vector_isa

    isa = vector_isa(target_text)
    return isa.lanes(32), isa.registers


def _applies(ctx: Any) -> bool:
    from tilelang.transform import utils as C

    if ctx.num_threads != 1 or len(ctx.args) < 7:
        return False
    try:
        regions = [ctx.region(i) for i in range(3)]
    except Exception:
        return False
    if any(len(r.region) < 2 for r in regions):
        return False
    if any(C.as_int(r.extent) is None for r in regions for r in r.region[-2:]):
        return False
    a, b, c = (str(r.source.ty.dtype) for r in regions)
    return c == "float32" and a in _INPUT_DTYPES and b in _INPUT_DTYPES


def _pack_b_panels(src: Any, trans: bool, n: int, k: int, nr: int, dst: Any, vector: bool) -> Any:
    """``dst`` (flat, ``k * n``) <- fp32 ``op(B)`` of region `src` in column panels: the panel starting at column
    ``c0`` (width ``w = nr``, or the last narrower one) is contiguous at ``c0 * k``, its element ``(kk, j)`` at
    ``c0 * k + kk * w + j``. Plain B is copied one source row at a time across all panels (whole rows read in
    order); transposed B one source row (a column of ``op(B)``) at a time along K."""
    from tvm import tirx

    from tilelang.backend.sdk import operand_index, tileop_utils
    from tilelang.transform import utils as C

    full, tail = divmod(n, nr)
    serial = tirx.ForKind.SERIAL

    def element(kk: Any, c0: Any, w: int, j: Any) -> Any:
        load = tirx.BufferLoad(src.source, operand_index(src, kk, c0 + j, trans))
        return tirx.BufferStore(dst, tileop_utils.cast("float32", load), [c0 * k + kk * w + j])

    def panels(kk: Any, piece: Any) -> Any:
        """`piece(kk, c0, w)` for every panel (the full ones in a loop, then the narrower last one)."""
        p = tirx.Var("p", "int32")
        stmts = [_loop(p, full, serial, piece(kk, p * nr, nr))] if full else []
        if tail:
            stmts.append(piece(kk, tirx.const(full * nr, "int32"), tail))
        return C.seq(stmts)

    if not trans:
        def row_piece(kk: Any, c0: Any, w: int) -> Any:
            j = tirx.Var("j", "int32")
            kind = tirx.ForKind.VECTORIZED if vector and w > 1 and w & (w - 1) == 0 else serial
            return _loop(j, w, kind, element(kk, c0, w, j))

        kk = tirx.Var("kk", "int32")
        return _loop(kk, k, serial, panels(kk, row_piece))

    def column_piece(_: Any, c0: Any, w: int) -> Any:
        j, kk = tirx.Var("j", "int32"), tirx.Var("kk", "int32")
        return _loop(j, w, serial, _loop(kk, k, serial, element(kk, c0, w, j)))

    return panels(None, column_piece)


def _pack_a_rows(src: Any, trans: bool, m: int, k: int, dst: Any, vector: bool) -> Any:
    """``dst[i * k + kk] = fp32(op(A)[i, kk])``: A as a compact row-major fp32 tile, the loop over the source's
    contiguous side innermost."""
    from tvm import tirx

    from tilelang.backend.sdk import operand_index, tileop_utils

    i, kk = tirx.Var("i", "int32"), tirx.Var("kk", "int32")
    load = tirx.BufferLoad(src.source, operand_index(src, i, kk, trans))
    store = tirx.BufferStore(dst, tileop_utils.cast("float32", load), [i * k + kk])
    serial = tirx.ForKind.SERIAL
    if trans:
        return _loop(kk, k, serial, _loop(i, m, serial, store))
    kind = tirx.ForKind.VECTORIZED if vector and k & (k - 1) == 0 and k <= 1024 else serial
    return _loop(i, m, serial, _loop(kk, k, kind, store))


def _micro_tile(a_at: Any, b_at: Any, c_at: Any, clear: bool, i0: Any, j0: Any, mr: int, nr: int, k: int,
                vector: bool, fetch: Prefetch | None = None, tile: Any = None) -> Any:
    """One ``mr x nr`` accumulator tile over the full K. ``a_at(i0, r, kk)`` / ``b_at(j0, j, kk, nr)`` give
    (buffer, indices) of ``op(A)[i0 + r, kk]`` / ``op(B)[kk, j0 + j]`` (B in a panel of width `nr`);
    ``c_at(row, col)`` those of C; `fetch` (optional) the prefetches to interleave, `tile` this tile's number.

    Each accumulator row is its own ``nr``-element buffer: TVM keeps CPU allocations under 1 KiB on the stack
    (``alloca``, which LLVM promotes to registers) and turns larger ones into heap workspace.
    """
    from tvm import tirx

    from tilelang.transform import utils as C

    accs = [tirx.decl_buffer([nr], "float32", name=f"acc{r}", scope="global") for r in range(mr)]
    j, kk = tirx.Var("j", "int32"), tirx.Var("kk", "int32")
    vec = tirx.ForKind.VECTORIZED if vector else tirx.ForKind.SERIAL

    def rows(make: Any) -> Any:
        return C.seq([_loop(j, nr, vec, make(r, acc)) for r, acc in enumerate(accs)])

    def init(r: int, acc: Any) -> Any:
        cbuf, cidx = c_at(i0 + r, j0 + j)
        return tirx.BufferStore(acc, tirx.const(0, "float32") if clear else tirx.BufferLoad(cbuf, cidx), [j])

    def fma(r: int, acc: Any) -> Any:
        (abuf, aidx), (bbuf, bidx) = a_at(i0, r, kk), b_at(j0, j, kk, nr)
        return tirx.BufferStore(acc, tirx.BufferLoad(acc, [j])
                                + tirx.BufferLoad(abuf, aidx) * tirx.BufferLoad(bbuf, bidx), [j])

    def store(r: int, acc: Any) -> Any:
        cbuf, cidx = c_at(i0 + r, j0 + j)
        return tirx.BufferStore(cbuf, tirx.BufferLoad(acc, [j]), cidx)

    if fetch is None:
        k_loop = _loop(kk, k, tirx.ForKind.SERIAL, rows(fma))
    else:  # one prefetch slot per `every` iterations: the K loop split, its inner part unrolled
        ko, ki = tirx.Var("ko", "int32"), tirx.Var("ki", "int32")
        if fetch.every > 1:
            inner = _loop(ki, fetch.every, tirx.ForKind.UNROLLED, C.substitute(rows(fma), {kk: ko * fetch.every + ki}))
        else:
            inner = C.substitute(rows(fma), {kk: ko})
        k_loop = _loop(ko, k // fetch.every, tirx.ForKind.SERIAL, C.seq([fetch.fetch(tile, ko), inner]))
    return C.seq([*(tirx.AllocBuffer(acc) for acc in accs), rows(init), k_loop, rows(store)])


def lower_gemm_micro(ctx: Any) -> Any:
    """Lower one ``tl.gemm`` to packing (where planned) plus micro-kernel loops (see the module docstring)."""
    from tvm import tirx

    from tilelang.backend.sdk import gemm_operands, operand_index
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import PREFETCH, config, gemm_plan
    from tilelang_cpu.gemm_prefetch import combine, next_step_tile, output_lines, output_tile
    from tilelang_cpu.gemm_prepack import whole_a_fp32, whole_b_panels
    from tilelang_cpu.isa import SCALAR, vector_isa

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    vector = bool(ctx.options.get("vectorize", True))
    wide_a = whole_a_fp32(ctx, a) if vector else None
    if wide_a is not None:
        pre_a, a = [*pre_a, *wide_a[0]], wide_a[1]
    m, n = (C.as_int(r.extent) for r in c.region[-2:])
    k = C.as_int(b.region[-1].extent if tb else b.region[-2].extent)
    isa = vector_isa(ctx.target) if vector else SCALAR
    plan = gemm_plan(isa, m, n, k, str(a.source.ty.dtype), str(b.source.ty.dtype), tb)
    prefetch = vector and bool(config(PREFETCH, True))
    full_m, tail_m = divmod(m, plan.mr)
    full_n, tail_n = divmod(n, plan.nr)
    strips = full_m + (1 if tail_m else 0)
    panels = full_n + (1 if tail_n else 0)
    stmts = [*pre_a, *pre_b]
    fetch = None

    def a_at(i0: Any, r: int, kk: Any) -> Any:
        return a.source, operand_index(a, i0 + r, kk, ta)

    def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
        return b.source, operand_index(b, kk, j0 + j, tb)

    if plan.pack_a:
        a_pack = _scratch("A_pack", m * k)
        stmts += [tirx.AllocBuffer(a_pack), _pack_a_rows(a, ta, m, k, a_pack, vector)]

        def a_at(i0: Any, r: int, kk: Any) -> Any:
            return a_pack, [(i0 + r) * k + kk]

    whole_b = whole_b_panels(ctx, b, tb, k, plan.nr, vector, strips, panels) if plan.pack_b else None
    if whole_b is not None:
        stmts += whole_b.stmts
        b_at = whole_b.b_at
        fetch = whole_b.fetch if prefetch else None
    elif plan.pack_b:
        if prefetch and C.scope_of(b.source) == "global":
            fetch = next_step_tile(b, tb, k, n, strips * panels)
        b_pack = _scratch("B_pack", k * n)
        stmts += [tirx.AllocBuffer(b_pack), _pack_b_panels(b, tb, n, k, plan.nr, b_pack, vector)]

        def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
            return b_pack, [j0 * k + kk * width + j]

    if fetch is not None:
        dst = output_lines(ctx.func, c, clear)
        if dst is not None:
            fetch = combine(fetch, output_tile(dst, m, n, strips * panels, k, fetch.every))

    def c_at(row: Any, col: Any) -> Any:
        return c.source, operand_index(c, row, col, False)

    i0, j0 = tirx.Var("i0", "int32"), tirx.Var("j0", "int32")
    serial = tirx.ForKind.SERIAL

    def strips_of(col: Any, width: int, panel: Any) -> Any:
        """Every row strip of one column panel starting at column `col` (panel number `panel` of the call)."""
        body = []
        first = panel * strips
        if full_m:
            tile = _micro_tile(a_at, b_at, c_at, clear, i0 * plan.mr, col, plan.mr, width, k, vector, fetch,
                               first + i0)
            body.append(_loop(i0, full_m, serial, tile))
        if tail_m:
            start = tirx.const(full_m * plan.mr, "int32")
            body.append(_micro_tile(a_at, b_at, c_at, clear, start, col, tail_m, width, k, vector, fetch,
                                    first + full_m))
        return C.seq(body)

    if full_n:
        stmts.append(_loop(j0, full_n, serial, strips_of(j0 * plan.nr, plan.nr, j0)))
    if tail_n:
        stmts.append(strips_of(tirx.const(full_n * plan.nr, "int32"), tail_n, full_n))
    return C.seq(stmts)


IMPLS = (TileOpImpl("tl.gemm", "cpu_micro_kernel", lower_gemm_micro, applies=_applies, priority=2),)
