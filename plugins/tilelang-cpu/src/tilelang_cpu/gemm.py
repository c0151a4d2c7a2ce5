"""``tl.gemm`` on the CPU as a register-blocked, vectorised micro-kernel (priority 2, llvm target).

A block is one CPU thread, so the whole C tile is ours. The tile is cut into ``MR x NR`` micro tiles chosen
for the target's vector registers (`tilelang_cpu.gemm_plan`): 6x64 fp32 on AVX-512 (24 zmm accumulators, 4 for
a row of B, 1 broadcast of A), 6x16 on AVX2 (12 + 2 + 1 of 16 ymm). Per micro tile::

    acc[MR, NR] (one stack buffer per row: LLVM keeps it in vector registers)  <- 0 or C tile
    for k in range(K):                     # the whole K of the call, innermost over the micro tile
        for i in unroll(MR):
            for j in vectorized(NR):       # NR / lanes FMAs with A[i, k] broadcast
                acc[i, j] += A[i, k] * B[k, j]
    C tile <- acc

Micro tiles walk B's column panels outermost (a K x NR panel of B stays in L1 while every row strip of A passes
over it). Tails: rows past the last full strip run a second kernel with ``M % MR`` rows; a last panel narrower than
NR is a vector of that width.

Packing (per gemm call, into block-local fp32 scratch): B in column panels (each ``K x NR`` panel contiguous,
element ``[k, j]`` of the panel at ``k * NR + j``) whenever the plan says so -- always when B is transposed or
not fp32, and for fp32 B by default (rows of a B tile are far apart: one cache set per row at power-of-two
strides, and the panel would not stay in L1); A in row strips (``MR x K`` contiguous, k-major) when A is not fp32
or ``tl.cpu.gemm_pack_a`` asks for it; otherwise A is read in place (one scalar per row and k).
Instances it does not handle (threads per block > 1, non-constant extents, C not fp32, other input dtypes) fall
back to the lower-priority implementations.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl
from tilelang_cpu.gemm_plan import MicroShape, micro_shape
from tilelang_cpu.gemm_prefetch import Prefetch

__all__ = ["IMPLS", "MicroShape", "lower_gemm_micro", "micro_shape"]

_INPUT_DTYPES = ("float32", "float16", "bfloat16")


def _vector_facts(target_text: str) -> tuple[int, int]:
    """``(fp32 lanes per vector register, vector register count)`` of an llvm target (see `tilelang_cpu.isa`)."""
    from tilelang_cpu.isa import vector_isa

    isa = vector_isa(target_text)
    return isa.lanes(32), isa.registers


def _applies(ctx: Any) -> bool:
    from tilelang.transform import _common as C

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


def _loop(var: Any, extent: int, kind: Any, body: Any) -> Any:
    from tvm import tirx

    return tirx.For(var, 0, extent, kind, body)


def _scratch(name: str, size: int) -> Any:
    """A flat block-private fp32 tile: scope ``global`` inside the block loop is a stack array up to 1 KiB, else
    workspace."""
    from tvm import tirx

    return tirx.decl_buffer([size], "float32", name=name, scope="global", data_alignment=64)


def _pack_panels(src: Any, trans: bool, side: str, extent: int, k: int, width: int, dst: Any, vector: bool) -> Any:
    """``dst`` (flat, ``extent * k``) <- fp32 operand `src` in panels of `width` along its non-K side.

    ``side="b"``: column panels of ``op(B)`` (``k x extent``); ``side="a"``: row strips of ``op(A)``
    (``extent x k``). The panel starting at ``c0`` (``w = width``, or the last narrower one) is contiguous at
    ``c0 * k``, its element ``(kk, j)`` at ``c0 * k + kk * w + j``: the micro-kernel reads it as one stream.
    """
    from tvm import tirx

    from tilelang.tileop._util import cast
    from tilelang.tileop.gemm import operand_index
    from tilelang.transform import _common as C

    full, tail = divmod(extent, width)
    serial = tirx.ForKind.SERIAL
    # the source's contiguous dimension: j (across panels) when it runs along the source's last axis
    j_contiguous = (side == "b") != trans

    def element(kk: Any, c0: Any, w: int, j: Any) -> Any:
        row, col = (kk, c0 + j) if side == "b" else (c0 + j, kk)
        load = tirx.BufferLoad(src.source, operand_index(src, row, col, trans))
        return tirx.BufferStore(dst, cast("float32", load), [c0 * k + kk * w + j])

    def panels(kk: Any, inner: Any) -> Any:
        """`inner(kk, c0, w)` for every panel (the full ones in a loop, then the narrower last one)."""
        p = tirx.Var("p", "int32")
        stmts = [_loop(p, full, serial, inner(kk, p * width, width))] if full else []
        if tail:
            stmts.append(inner(kk, tirx.const(full * width, "int32"), tail))
        return C.seq(stmts)

    if j_contiguous:
        # one source row (a K index) at a time, all panels: whole rows are read in order, prefetcher-friendly
        def row_piece(kk: Any, c0: Any, w: int) -> Any:
            j = tirx.Var("j", "int32")
            kind = tirx.ForKind.VECTORIZED if vector and w > 1 and w & (w - 1) == 0 else serial
            return _loop(j, w, kind, element(kk, c0, w, j))

        kk = tirx.Var("kk", "int32")
        return _loop(kk, k, serial, panels(kk, row_piece))

    def column_piece(_: Any, c0: Any, w: int) -> Any:
        # the source's rows run along K: walk each one contiguously
        j, kk = tirx.Var("j", "int32"), tirx.Var("kk", "int32")
        return _loop(j, w, serial, _loop(kk, k, serial, element(kk, c0, w, j)))

    return panels(None, column_piece)


def _pack_rows(src: Any, trans: bool, m: int, k: int, dst: Any, vector: bool) -> Any:
    """``dst[i * k + kk] = fp32(op(A)[i, kk])``: A as a compact row-major fp32 tile (rows ``k`` apart instead of a
    tensor's row stride), the loop over the source's contiguous side innermost."""
    from tvm import tirx

    from tilelang.tileop._util import cast
    from tilelang.tileop.gemm import operand_index

    i, kk = tirx.Var("i", "int32"), tirx.Var("kk", "int32")
    store = tirx.BufferStore(dst, cast("float32", tirx.BufferLoad(src.source, operand_index(src, i, kk, trans))),
                             [i * k + kk])
    serial = tirx.ForKind.SERIAL
    if trans:
        return _loop(kk, k, serial, _loop(i, m, serial, store))
    kind = tirx.ForKind.VECTORIZED if vector and k & (k - 1) == 0 and k <= 1024 else serial
    return _loop(i, m, serial, _loop(kk, k, kind, store))


def _shift(region: Any, trans: bool, col: Any) -> Any:
    """`region` (operand B) starting `col` columns of ``op(B)`` further."""
    import tvm
    from tvm import tirx

    from tilelang.transform import _common as C

    ranges = list(region.region)
    d = len(ranges) - 2 if trans else len(ranges) - 1
    ranges[d] = tvm.ir.Range.from_min_extent(C.add(ranges[d].min, col), ranges[d].extent)
    return tirx.BufferRegion(region.source, ranges)


def _micro_tile(a_at: Any, b_at: Any, c_at: Any, clear: bool, i0: Any, j0: Any, mr: int, nr: int, k: int,
                vector: bool, fetch: Prefetch | None = None, tile: Any = None) -> Any:
    """One ``mr x nr`` accumulator tile over the full K. ``a_at(i0, r, kk, mr)`` / ``b_at(j0, j, kk, nr)`` give
    (buffer, indices) of ``op(A)[i0 + r, kk]`` / ``op(B)[kk, j0 + j]`` for a strip / panel of that size;
    ``c_at(row, col)`` those of C; `fetch` (optional) the prefetches to interleave, `tile` this tile's number.

    Each accumulator row is its own ``nr``-element buffer: TVM keeps CPU allocations under 1 KiB on the stack
    (``alloca``, which LLVM promotes to registers) and turns larger ones into heap workspace.
    """
    from tvm import tirx

    from tilelang.transform import _common as C

    accs = [tirx.decl_buffer([nr], "float32", name=f"acc{r}", scope="global") for r in range(mr)]
    j, kk = tirx.Var("j", "int32"), tirx.Var("kk", "int32")
    vec = tirx.ForKind.VECTORIZED if vector else tirx.ForKind.SERIAL

    def rows(make: Any) -> Any:
        return C.seq([_loop(j, nr, vec, make(r, acc)) for r, acc in enumerate(accs)])

    def init(r: int, acc: Any) -> Any:
        cbuf, cidx = c_at(i0 + r, j0 + j)
        return tirx.BufferStore(acc, tirx.const(0, "float32") if clear else tirx.BufferLoad(cbuf, cidx), [j])

    def fma(r: int, acc: Any) -> Any:
        (abuf, aidx), (bbuf, bidx) = a_at(i0, r, kk, mr), b_at(j0, j, kk, nr)
        return tirx.BufferStore(acc, tirx.BufferLoad(acc, [j])
                                + tirx.BufferLoad(abuf, aidx) * tirx.BufferLoad(bbuf, bidx), [j])

    def store(r: int, acc: Any) -> Any:
        cbuf, cidx = c_at(i0 + r, j0 + j)
        return tirx.BufferStore(cbuf, tirx.BufferLoad(acc, [j]), cidx)

    if fetch is None:
        k_loop = _loop(kk, k, tirx.ForKind.SERIAL, rows(fma))
    else:  # one prefetch per `every` iterations: the K loop split, its inner part unrolled
        ko, ki = tirx.Var("ko", "int32"), tirx.Var("ki", "int32")
        body = C.substitute(rows(fma), {kk: ko * fetch.every + ki})
        inner = _loop(ki, fetch.every, tirx.ForKind.UNROLLED, body) if fetch.every > 1 else C.substitute(
            rows(fma), {kk: ko})
        k_loop = _loop(ko, k // fetch.every, tirx.ForKind.SERIAL, C.seq([fetch.fetch(tile, ko), inner]))
    return C.seq([*(tirx.AllocBuffer(acc) for acc in accs), rows(init), k_loop, rows(store)])


def lower_gemm_micro(ctx: Any) -> Any:
    """Lower one ``tl.gemm`` to packing (where planned) plus micro-kernel loops (see the module docstring)."""
    from tvm import tirx

    from tilelang.tileop.gemm import gemm_operands, operand_index
    from tilelang.transform import _common as C
    from tilelang_cpu.gemm_plan import PREFETCH, _config, gemm_plan
    from tilelang_cpu.gemm_prefetch import combine, next_step_tile, output_destination, output_tile
    from tilelang_cpu.gemm_prepack import whole_a_fp32, whole_b_panels
    from tilelang_cpu.isa import SCALAR, vector_isa

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    wide_a = whole_a_fp32(ctx, a) if ctx.options.get("vectorize", True) else None
    if wide_a is not None:
        pre_a, a = [*pre_a, *wide_a[0]], wide_a[1]
    m, n = (C.as_int(r.extent) for r in c.region[-2:])
    k = C.as_int(b.region[-1].extent if tb else b.region[-2].extent)
    vector = bool(ctx.options.get("vectorize", True))
    isa = vector_isa(ctx.target) if vector else SCALAR
    plan = gemm_plan(isa, m, n, k, str(a.source.ty.dtype), str(b.source.ty.dtype), tb)
    stmts = [*pre_a, *pre_b]

    def a_at(i0: Any, r: int, kk: Any, rows: int) -> Any:
        return a.source, operand_index(a, i0 + r, kk, ta)

    def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
        return b.source, operand_index(b, kk, j0 + j, tb)

    if plan.pack_a:
        a_pack = _scratch("A_pack", m * k)
        stmts += [tirx.AllocBuffer(a_pack), _pack_rows(a, ta, m, k, a_pack, vector)]

        def a_at(i0: Any, r: int, kk: Any, rows: int) -> Any:
            return a_pack, [(i0 + r) * k + kk]

    fetch = None
    full_m, tail_m = divmod(m, plan.mr)
    full_n, tail_n = divmod(n, plan.nr)
    strips_per_panel = full_m + (1 if tail_m else 0)
    if C.scope_of(b.source) == "global" and _config(PREFETCH, True):
        fetch = next_step_tile(b, tb, k, n, strips_per_panel * (full_n + (1 if tail_n else 0)))
    per_panel = None
    whole = (whole_b_panels(ctx, b, tb, k, plan.nr, vector, strips_per_panel, full_n + (1 if tail_n else 0))
             if plan.pack_b else None)
    if whole is not None:
        stmts += whole.stmts
        b_at = whole.b_at
        fetch = whole.fetch if _config(PREFETCH, True) else None
    elif plan.pack_b and _config("tl.cpu.gemm_pack_b", True) == "panel":
        b_pack = _scratch("B_pack", k * plan.nr)
        stmts.append(tirx.AllocBuffer(b_pack))

        def per_panel(col: Any, width: int) -> Any:
            sub = tirx.BufferRegion(b.source, list(b.region))
            return _pack_panels(_shift(sub, tb, col), tb, "b", width, k, width, b_pack, vector)

        def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
            return b_pack, [kk * width + j]
    elif plan.pack_b:
        b_pack = _scratch("B_pack", k * n)
        stmts += [tirx.AllocBuffer(b_pack), _pack_panels(b, tb, "b", n, k, plan.nr, b_pack, vector)]

        def b_at(j0: Any, j: Any, kk: Any, width: int) -> Any:
            return b_pack, [j0 * k + kk * width + j]

    tiles = strips_per_panel * (full_n + (1 if tail_n else 0))
    if fetch is not None and C.scope_of(c.source) != "global" and _config(PREFETCH, True):
        dst = output_destination(ctx.func, c.source)
        if dst is not None:
            fetch = combine(fetch, output_tile(dst, m, n, tiles, k, fetch.every))

    def c_at(row: Any, col: Any) -> Any:
        return c.source, operand_index(c, row, col, False)

    i0, j0 = tirx.Var("i0", "int32"), tirx.Var("j0", "int32")
    serial = tirx.ForKind.SERIAL

    def strips(col: Any, width: int, panel: Any) -> Any:
        """Every row strip of one column panel starting at column `col` (panel number `panel`)."""
        body = [per_panel(col, width)] if per_panel is not None else []
        first = panel * strips_per_panel
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
        stmts.append(_loop(j0, full_n, serial, strips(j0 * plan.nr, plan.nr, j0)))
    if tail_n:
        stmts.append(strips(tirx.const(full_n * plan.nr, "int32"), tail_n, full_n))
    return C.seq(stmts)


IMPLS = (TileOpImpl("tl.gemm", "cpu_micro_kernel", lower_gemm_micro, applies=_applies, priority=2),)
