"""``tl.gemm`` on the CPU as a register-blocked, vectorised micro-kernel (priority 2, llvm target).

A block is one CPU thread, so the whole C tile is ours. The tile is cut into ``MR x NR`` micro tiles (6x64 fp32 on
AVX-512: 24 zmm accumulators + 4 for a row of B + 1 broadcast of A; 6x16 on AVX2). Per micro tile::

    acc[MR, NR] (scope "local": LLVM keeps it in vector registers)  <- 0 or C tile
    for k in range(K):                     # the whole K of the call, innermost over the micro tile
        for i in unroll(MR):
            for j in vectorized(NR):       # NR / lanes FMAs with A[i, k] broadcast
                acc[i, j] += A[i, k] * B[k, j]
    C tile <- acc

Micro tiles walk B's column panels outermost (a K x NR panel of B stays in L1 while every row strip of A passes
over it). Tails: rows past the last full strip run a second kernel with ``M % MR`` rows; a last panel narrower than
NR is a vector of that width. Operands that the inner loop cannot read as fp32 rows are first packed into a
block-local fp32 scratch tile: B when transposed (``B[n, k]``) or not fp32, A when not fp32 (a transposed fp32 A is
read in place: only one scalar per row and k is loaded). B is packed in column panels (each ``K x NR`` panel
contiguous, the layout the micro-kernel streams), which also makes transposed B about twice as fast as a
row-major pack; ``PACK_B_PANELS`` packs fp32 B the same way (off: reading it in place measured as fast).
Instances it does not handle (threads per block > 1,
non-constant extents, C not fp32, other input dtypes) fall back to the lower-priority implementations.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from tilelang.backend import TileOpImpl

_INPUT_DTYPES = ("float32", "float16", "bfloat16")
PACK_B_PANELS = False  # fp32 B read in place measured as fast (CPU time); True packs it too


class MicroShape(NamedTuple):
    """Register blocking of the micro-kernel: ``mr`` rows x ``nr`` columns of C held in vector registers."""

    mr: int
    nr: int


@functools.cache
def _vector_facts(target_text: str) -> tuple[int, int]:
    """``(fp32 lanes per vector register, vector register count)`` of the host CPU for an llvm target."""
    import tvm.target.codegen as cg
    from tvm.target import Target

    from tilelang_cpu.codegen import with_host_cpu

    target = with_host_cpu(Target(target_text))
    bits = int(cg.llvm_get_vector_width(target)) if str(target.kind.name) == "llvm" else 128
    bits = bits if bits >= 128 else 128
    regs = 32 if (bits >= 512 or "aarch64" in str(target.attrs.get("mtriple", ""))) else 16
    return bits // 32, regs


def micro_shape(m: int, n: int, lanes: int, regs: int) -> MicroShape:
    """The micro tile for an ``m x n`` C tile: up to 4 vectors wide, as many rows as the registers allow."""
    vectors = max(1, min(4, -(-n // lanes)))
    if regs <= 16:
        vectors = min(vectors, 2)
    rows = max(1, min(12, (regs - vectors - 1) // vectors, m))
    return MicroShape(rows, vectors * lanes)


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


def _scratch(name: str, shape: list[int], dtype: str) -> Any:
    """A block-private tile: scope ``global`` inside the block loop is a stack array up to 1 KiB, else workspace."""
    from tvm import tirx

    return tirx.decl_buffer(shape, dtype, name=name, scope="global", data_alignment=64)


def _pack_panels(src: Any, trans: bool, k: int, n: int, nr: int, dst: Any, vector: bool) -> Any:
    """``dst`` (flat, ``k * n``) <- fp32 ``op(src)`` in column panels: the ``k x w`` panel starting at column
    ``c0`` (``w = nr``, or the last narrower one) is contiguous at ``c0 * k``, element ``[kk, j]`` at
    ``c0 * k + kk * w + j``. The micro-kernel then reads one panel as a single stream that fits L1 far better
    than every ``nr``-wide slice of ``k`` rows of the whole tile."""
    from tvm import tirx

    from tilelang.tileop._util import cast
    from tilelang.tileop.gemm import operand_index
    from tilelang.transform import _common as C

    full, tail = divmod(n, nr)
    p = tirx.Var("p", "int32")

    def panel(c0: Any, w: int) -> Any:
        kk, j = tirx.Var("kk", "int32"), tirx.Var("j", "int32")  # fresh per loop nest: each has its own bounds
        load = tirx.BufferLoad(src.source, operand_index(src, kk, c0 + j, trans))
        store = tirx.BufferStore(dst, cast("float32", load), [c0 * k + kk * w + j])
        kind = tirx.ForKind.VECTORIZED if vector and not trans and w > 1 else tirx.ForKind.SERIAL
        if trans:  # source rows are our columns: walk each contiguously
            return _loop(j, w, tirx.ForKind.SERIAL, _loop(kk, k, tirx.ForKind.SERIAL, store))
        return _loop(kk, k, tirx.ForKind.SERIAL, _loop(j, w, kind, store))

    stmts = []
    if full:
        stmts.append(_loop(p, full, tirx.ForKind.SERIAL, panel(p * nr, nr)))
    if tail:
        stmts.append(panel(tirx.const(full * nr, "int32"), tail))
    return C.seq(stmts)


def _pack(src: Any, trans: bool, rows: int, cols: int, dst: Any, vector: bool) -> Any:
    """``dst[r, c] = fp32(op(src)[r, c])``: the loop over the contiguous side of the source is innermost."""
    from tvm import tirx

    from tilelang.tileop._util import cast
    from tilelang.tileop.gemm import operand_index

    r, c = tirx.Var("r", "int32"), tirx.Var("c", "int32")
    store = tirx.BufferStore(dst, cast(str(dst.ty.dtype), tirx.BufferLoad(src.source, operand_index(src, r, c, trans))),
                             [r, c])
    kind = tirx.ForKind.VECTORIZED if vector and not trans and cols <= 64 else tirx.ForKind.SERIAL
    if trans:  # source rows are our columns: walk them contiguously
        return _loop(c, cols, tirx.ForKind.SERIAL, _loop(r, rows, kind, store))
    return _loop(r, rows, tirx.ForKind.SERIAL, _loop(c, cols, kind, store))


def _micro_tile(a_at: Any, b_at: Any, c_at: Any, clear: bool, i0: Any, j0: Any, mr: int, nr: int, k: int,
                vector: bool) -> Any:
    """One ``mr x nr`` accumulator tile over the full K; ``a_at(row, col)`` / ``c_at(row, col)`` and
    ``b_at(k, panel start column, column in panel, panel width)`` give (buffer, indices) of elements.

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
        (abuf, aidx), (bbuf, bidx) = a_at(i0 + r, kk), b_at(kk, j0, j, nr)
        return tirx.BufferStore(acc, tirx.BufferLoad(acc, [j])
                                + tirx.BufferLoad(abuf, aidx) * tirx.BufferLoad(bbuf, bidx), [j])

    def store(r: int, acc: Any) -> Any:
        cbuf, cidx = c_at(i0 + r, j0 + j)
        return tirx.BufferStore(cbuf, tirx.BufferLoad(acc, [j]), cidx)

    return C.seq([*(tirx.AllocBuffer(acc) for acc in accs), rows(init),
                  _loop(kk, k, tirx.ForKind.SERIAL, rows(fma)), rows(store)])


def lower_gemm_micro(ctx: Any) -> Any:
    """Lower one ``tl.gemm`` to packing (where needed) plus micro-kernel loops (see the module docstring)."""
    from tvm import tirx

    from tilelang.tileop.gemm import gemm_operands, operand_index
    from tilelang.transform import _common as C

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    m, n = (C.as_int(r.extent) for r in c.region[-2:])
    k = C.as_int(b.region[-1].extent if tb else b.region[-2].extent)
    vector = bool(ctx.options.get("vectorize", True))
    lanes, regs = _vector_facts(str(ctx.target)) if vector else (1, 16)
    shape = micro_shape(m, n, lanes, regs)
    stmts = [*pre_a, *pre_b]

    def reader(region: Any, trans: bool) -> Any:
        return lambda row, col: (region.source, operand_index(region, row, col, trans))

    a_at = reader(a, ta)
    b_read = reader(b, tb)
    b_at = lambda row, col0, j, width: b_read(row, col0 + j)
    if str(a.source.ty.dtype) != "float32":
        a_pack = _scratch("A_pack", [m, k], "float32")
        stmts += [tirx.AllocBuffer(a_pack), _pack(a, ta, m, k, a_pack, vector)]
        a_at = lambda row, col: (a_pack, [row, col])
    if tb or str(b.source.ty.dtype) != "float32" or (PACK_B_PANELS and m > shape.mr and n > shape.nr):
        # B in contiguous column panels: needed to read it as fp32 rows, and worth a copy once the panel is
        # swept by several row strips and the tile is wider than one panel (rows of a panel are strided)
        b_pack = _scratch("B_pack", [k * n], "float32")
        stmts += [tirx.AllocBuffer(b_pack), _pack_panels(b, tb, k, n, shape.nr, b_pack, vector)]
        b_at = lambda row, col0, j, width: (b_pack, [col0 * k + row * width + j])
    c_at = reader(c, False)

    i0, j0 = tirx.Var("i0", "int32"), tirx.Var("j0", "int32")
    full_m, tail_m = divmod(m, shape.mr)
    full_n, tail_n = divmod(n, shape.nr)
    serial = tirx.ForKind.SERIAL

    def strips(col: Any, width: int) -> Any:
        """Every row strip of one column panel starting at column `col`."""
        body = []
        if full_m:
            tile = _micro_tile(a_at, b_at, c_at, clear, i0 * shape.mr, col, shape.mr, width, k, vector)
            body.append(_loop(i0, full_m, serial, tile))
        if tail_m:
            body.append(_micro_tile(a_at, b_at, c_at, clear, full_m * shape.mr, col, tail_m, width, k, vector))
        return C.seq(body)

    if full_n:
        stmts.append(_loop(j0, full_n, serial, strips(j0 * shape.nr, shape.nr)))
    if tail_n:
        stmts.append(strips(tirx.const(full_n * shape.nr, "int32"), tail_n))
    return C.seq(stmts)


IMPLS = (TileOpImpl("tl.gemm", "cpu_micro_kernel", lower_gemm_micro, applies=_applies, priority=2),)
