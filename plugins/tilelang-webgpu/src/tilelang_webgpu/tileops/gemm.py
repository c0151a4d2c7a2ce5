"""``tl.gemm`` on WebGPU: a register-blocked outer product over the thread's own C elements.

Core's layout inference spreads a partitioned C fragment cyclically: element ``f = i * N + j`` of the row-major
tile lives in thread ``f % T`` at register ``f // T``. When ``T`` divides ``N`` or ``N`` divides ``T`` (and the
tile splits evenly) a thread's elements form a grid: rows ``P`` x columns ``Q`` (``T % N == 0``: ``M * N / T``
rows ``r * (T / N) + t // N`` of column ``t % N``; ``N % T == 0``: every row, columns ``t + b * T``). Under a
vector fragment layout (``tl.vector_lanes = V``, core's ``fragment_vector_lanes`` option) the same holds with
rows of ``N / V`` runs of ``V`` consecutive columns: ``T % (N / V) == 0`` gives rows ``r * g + t // (N / V)``
(``g = T V / N``) of columns ``(t % (N / V)) * V + q``; ``(N / V) % T == 0`` every row, columns
``((q // V) * T + t) * V + q % V`` -- runs of V consecutive columns, read 4 lanes at a time from B.

That grid is often a thin strip (128 threads on a 64x64 tile: 32 rows x 1 column, 33 loads per 32
multiply-adds), so when the workgroup memory allows, C travels per call through a workgroup tile into a more
square block (``bm x bn`` = rows ``(t // tn) * bm + p``, columns ``(t % tn) * bn + q``: 4x8 there, 12 loads per
32 multiply-adds); otherwise the thread works on its cyclic grid directly.

Per call the thread fills a private accumulator from C (or zeroes it), then steps through ``k`` four at a time:
an operand whose read runs along its buffer's contiguous dimension (A along k, B along k when transposed, A or B
along m / n when the thread's rows / columns are consecutive) and is provably aligned is read as one 4-lane
vector per row or column into a ``let``; the others element by element. Together with the 4-lane tile copies of
`tilelang_webgpu.tileops.copy`, TVM then declares the tiles ``array<vec4<f32>>``; on llvmpipe each 16-byte workgroup
read costs what a 4-byte one does, which is most of the 512^3 GEMM's time. ``P * Q`` multiply-adds per ``k``
follow, fully unrolled, so the accumulator stays in registers, and the accumulator is written back. The
accesses to C are parallel nests over C, so core's PartitionParallel maps them onto C's registers exactly as
every other access to the fragment. A partitioned-fragment A operand (flash attention's ``P @ V``) larger than
`STAGE_BYTES` is staged through workgroup memory a column chunk at a time rather than whole, which keeps the
corpus flash attention within WebGPU's 32 KiB. fp32 (or fp16 operands with an fp32/fp16 accumulator); anything
else falls back to the generic implementation.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import TileOpImpl

MAX_REGISTERS = 128  # C elements per thread this implementation keeps in registers
_DTYPES = ("float32", "float16")


def _grid(m: int, n: int, threads: int, lanes: int = 1) -> tuple[int, int] | None:
    """``(P, Q)``: the rows x columns of C one thread holds under the cyclic layout (runs of `lanes` consecutive
    elements per thread under a vector layout), or None when not a grid."""
    if (m * n) % (threads * lanes) or n % lanes:
        return None
    runs = n // lanes
    if threads % runs == 0:
        g = threads // runs
        return (m // g, lanes) if m % g == 0 else None
    if runs % threads == 0:
        return m, n // threads
    return None


def _lanes(ctx: Any, buf: Any) -> int:
    from tilelang_webgpu.tileops.reduce import fragment_lanes

    return fragment_lanes(ctx, buf)


def _shape(ctx: Any) -> tuple[int, int, int] | None:
    from tilelang.backend.sdk import gemm_operands
    from tilelang.transform import utils as C

    a, _, c, ta, _, _ = gemm_operands(ctx)
    dims = [C.as_int(c.region[-2].extent), C.as_int(c.region[-1].extent),
            C.as_int(a.region[-2].extent if ta else a.region[-1].extent)]
    return None if None in dims else (dims[0], dims[1], dims[2])


def applies(ctx: Any) -> bool:
    """C a partitioned fragment (the whole tile) whose per-thread elements form a small grid; known dtypes."""
    from tilelang.backend.sdk import gemm_operands
    from tilelang.transform import utils as C

    if not ctx.has_threads or ctx.num_threads <= 1 or ctx.func is None:
        return False
    try:
        a, b, c, *_ = gemm_operands(ctx)
        shape = _shape(ctx)
    except Exception:
        return False
    if shape is None:
        return False
    dtypes = [str(r.source.ty.dtype) for r in (a, b, c)]
    if any(d not in _DTYPES for d in dtypes):
        return False
    buf = c.source
    if C.scope_of(buf) != "local.fragment" or not ctx.is_partitioned(buf):
        return False
    full = [C.as_int(s) for s in buf.ty.shape]
    if None in full or [x for x in full if x != 1] != [shape[0], shape[1]]:
        return False  # C must be the whole 2-D fragment (the cyclic layout is over the whole tile)
    if any(not C.is_const(r.min, 0) for r in c.region):
        return False
    grid = _grid(shape[0], shape[1], ctx.num_threads, _lanes(ctx, buf))
    return grid is not None and grid[0] * grid[1] <= MAX_REGISTERS


WORKGROUP_BYTES = 32 * 1024  # WebGPU's guaranteed maxComputeWorkgroupStorageSize


def _block(m: int, n: int, threads: int) -> tuple[int, int, int, int] | None:
    """``(tm, tn, bm, bn)``: a ``tm x tn`` grid of threads each holding a ``bm x bn`` block of C (the most
    square block, i.e. the fewest operand loads per multiply-add), or None."""
    best = None
    for bn in range(1, n + 1):
        if n % bn or threads % (n // bn):
            continue
        tn = n // bn
        tm = threads // tn
        if m % tm:
            continue
        bm = m // tm
        key = (bm + bn, -bn)
        if bm * bn <= MAX_REGISTERS and (best is None or key < best[0]):
            best = (key, (tm, tn, bm, bn))
    return None if best is None else best[1]


STAGE_BYTES = 4096  # a partitioned-fragment A larger than this is staged in column chunks of at most this size


def _stage_chunk(ctx: Any, a: Any, ta: bool, m: int, k: int) -> int | None:
    """Columns of A staged at a time when A is a (non-transposed, whole) partitioned fragment whose staging
    tile would exceed STAGE_BYTES; None to stage it whole."""
    from tilelang.backend.sdk import dtype_bytes
    from tilelang.transform import utils as C

    buf = a.source
    if ta or not ctx.is_partitioned(buf) or len(a.region) != 2:
        return None
    if [C.as_int(s) for s in buf.ty.shape] != [m, k] or any(not C.is_const(r.min, 0) for r in a.region):
        return None
    elem = dtype_bytes(str(buf.ty.dtype))
    if m * k * elem <= STAGE_BYTES:
        return None
    chunk = k
    while chunk % 2 == 0 and (chunk // 2) % LANES == 0 and m * chunk * elem > STAGE_BYTES:
        chunk //= 2
    return chunk if chunk < k else None


def _staged_chunks(a: Any, m: int, k: int, chunk: int) -> tuple[list[Any], list[tuple[list[Any], Any, int]]]:
    """``(allocation, [(statements staging chunk c, the staged region, c * chunk)])``: A's columns
    ``[c * chunk, (c + 1) * chunk)`` copied into one ``m x chunk`` workgroup tile, chunk after chunk (a parallel
    nest over the whole fragment, so core maps it onto the registers; core's barrier pass orders the reuse)."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    buf = a.source
    scratch = tirx.decl_buffer((m, chunk), str(buf.ty.dtype), name=f"{buf.name}_stage", scope="shared.dyn")
    region = tirx.BufferRegion(scratch, [tvm.ir.Range.from_min_extent(0, m), tvm.ir.Range.from_min_extent(0, chunk)])
    parts = []
    for c0 in range(0, k, chunk):
        def copy(vs: list[Any], c0: int = c0) -> Any:
            inside = tirx.And(vs[1] >= c0, vs[1] < c0 + chunk)
            return tirx.IfThenElse(inside, tirx.BufferStore(scratch, tirx.BufferLoad(buf, vs),
                                                            [vs[0], vs[1] - c0]), None)

        parts.append(([C.make_parallel_nest([m, k], copy)], region, c0))
    return [tirx.AllocBuffer(scratch)], parts


def _shared_bytes(node: Any) -> int:
    from tilelang.backend.sdk import dtype_bytes
    from tilelang.transform import utils as C

    total = 0
    for alloc in C.allocations(node):
        buf = alloc.buffer
        if C.scope_of(buf).startswith("shared"):
            count = C.num_elements(buf.ty.shape)
            total += (count or 0) * dtype_bytes(str(buf.ty.dtype))
    return total


def lower_gemm(ctx: Any) -> Any:
    from tvm import tirx

    from tilelang.backend.sdk import gemm_operands, operand_index
    from tilelang.transform import utils as C

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    m, n, k = _shape(ctx)  # type: ignore[misc]
    chunk = _stage_chunk(ctx, a, ta, m, k)
    if chunk is None:
        pre_a, a = ctx.staged(a)
        a_chunks: list[tuple[list[Any], Any, int]] = [([], a, 0)]
    else:  # A, a partitioned fragment, is staged `chunk` columns at a time (see _staged_chunks)
        pre_a, a_chunks = _staged_chunks(a, m, k, chunk)
    pre_b, b = ctx.staged(b)
    threads = ctx.num_threads
    acc_dt = str(c.source.ty.dtype)
    acc_bytes = 4 if acc_dt == "float32" else 2
    tid = C.linear_thread(ctx.func)
    name = str(c.source.name)
    lanes = _lanes(ctx, c.source)
    runs = n // lanes
    p_rows, q_cols = _grid(m, n, threads, lanes)  # type: ignore[misc]
    block = _block(m, n, threads)
    used = _shared_bytes(ctx.func.body) + (_shared_bytes(C.seq([*pre_a, *pre_b])) if pre_a or pre_b else 0)
    exchange = (block is not None and block[2] + block[3] < p_rows + q_cols
                and used + m * n * acc_bytes <= WORKGROUP_BYTES)
    if exchange:
        # C goes through a workgroup tile into a more square per-thread block (see the module docstring):
        # thread t holds rows (t // tn) * bm + p and columns (t % tn) * bn + q, contiguous for 4-lane reads
        _, tn, p_rows, q_cols = block  # type: ignore[misc]
        bm, bn = p_rows, q_cols

        def row(p: int) -> Any:
            return tirx.floordiv(tid, tn) * bm + p

        def col(q: int) -> Any:
            return tirx.floormod(tid, tn) * bn + q
    elif threads % runs == 0:  # (runs of `lanes` columns; lanes = 1: the cyclic layout)
        g = threads // runs

        def row(p: int) -> Any:
            return p * g + tirx.floordiv(tid, runs)

        def col(q: int) -> Any:
            return tirx.floormod(tid, runs) * lanes + q if lanes > 1 else tirx.floormod(tid, n)
    else:
        def row(p: int) -> Any:
            return tirx.const(p, "int32")

        def col(q: int) -> Any:
            if lanes > 1:
                return (q // lanes * threads + tid) * lanes + q % lanes
            return q * threads + tid
    regs = p_rows * q_cols

    acc = tirx.decl_buffer((regs,), acc_dt, name=f"{name}_acc", scope="local")

    def c_index(vs: list[Any]) -> list[Any]:
        return operand_index(c, vs[0], vs[1], False)

    def reg_of(vs: list[Any]) -> Any:
        if lanes > 1:  # the vector layout's register (`tilelang.layout.Fragment.local`)
            f = vs[0] * n + vs[1]
            return tirx.floordiv(f, lanes * threads) * lanes + tirx.floormod(f, lanes)
        return tirx.floordiv(vs[0] * n + vs[1], threads)

    def each_reg(make: Any) -> list[Any]:
        return [make(p * q_cols + q, row(p), col(q)) for p in range(p_rows) for q in range(q_cols)]

    stmts: list[Any] = [*pre_a, *pre_b, tirx.AllocBuffer(acc)]
    scratch = None
    if exchange:
        scratch = tirx.decl_buffer((m, n), acc_dt, name=f"{name}_xchg", scope="shared.dyn")
        stmts.append(tirx.AllocBuffer(scratch))
    # C -> accumulator and back are marked (GEMM_IN / GEMM_OUT) so that `passes.hoist_gemm_accumulators` can move
    # them out of a loop that only accumulates into C through this GEMM (the usual K loop)
    if clear:
        stmts += [tirx.BufferStore(acc, tirx.const(0, acc_dt), [r]) for r in range(regs)]
    elif exchange:
        stmts.append(_marked(GEMM_IN, acc, [C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            scratch, tirx.BufferLoad(c.source, c_index(vs)), vs)), *each_reg(
                lambda r, i, j: tirx.BufferStore(acc, tirx.BufferLoad(scratch, [i, j]), [r]))]))
    else:
        stmts.append(_marked(GEMM_IN, acc, [C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            acc, tirx.BufferLoad(c.source, c_index(vs)), [reg_of(vs)]))]))

    rows_contiguous = exchange or (not exchange and threads % runs != 0)  # row(p) = base + p
    # col(q) = base + q: in aligned groups of LANES under a vector layout of a multiple of LANES lanes
    cols_contiguous = exchange or lanes % LANES == 0
    for stage, a_part, k0 in a_chunks:
        stmts += stage
        stmts.append(_inner_product(ctx, (a_part, ta, rows_contiguous), (b, tb, cols_contiguous),
                                    k // len(a_chunks), k0, p_rows, q_cols, row, col, acc, name))
    if exchange:
        out = [*each_reg(lambda r, i, j: tirx.BufferStore(scratch, tirx.BufferLoad(acc, [r]), [i, j])),
               C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(c.source, tirx.BufferLoad(scratch, vs),
                                                                        c_index(vs)))]
    else:
        out = [C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            c.source, tirx.BufferLoad(acc, [reg_of(vs)]), c_index(vs)))]
    stmts.append(C.seq(out) if clear else _marked(GEMM_OUT, acc, out))
    return C.seq(stmts)


GEMM_IN = "tl.webgpu_gemm_in"  # AttrStmt keys (node: the accumulator's data var), removed by HoistGemmAccumulators
GEMM_OUT = "tl.webgpu_gemm_out"


def _marked(key: str, acc: Any, stmts: list[Any]) -> Any:
    from tvm import tirx

    from tilelang.transform import utils as C

    return tirx.AttrStmt(acc.data, key, tirx.const(0, "int32"), C.seq(stmts))


LANES = 4


def _aligned(ctx: Any, region: Any) -> bool:
    """4-lane reads along the last dimension of `region` at offsets multiple of 4 are aligned and in one row."""
    from tvm import tirx

    from tilelang.transform import utils as C

    buf = region.source
    if list(getattr(buf, "strides", None) or []) or not C.scope_of(buf).startswith("shared"):
        return False
    last = C.as_int(buf.ty.shape[-1])
    return last is not None and last % LANES == 0 and ctx.analyzer.can_prove(
        tirx.floormod(region.region[-1].min, LANES) == 0)


def _inner_product(ctx: Any, a_op: tuple[Any, bool, bool], b_op: tuple[Any, bool, bool], k: int, b_k0: int,
                   p_rows: int, q_cols: int, row: Any, col: Any, acc: Any, name: str) -> Any:
    """The loop over ``k`` adding A's column times B's row (row ``b_k0 + k`` of B) into the thread's
    ``p_rows x q_cols`` accumulator.

    Operands are read 4 lanes at a time where the read runs along the buffer's contiguous dimension and is
    aligned: A (M x K) along k, or along m when transposed and the thread's rows are consecutive; B (K x N)
    along n when the thread's columns are consecutive, or along k when transposed. The loop then steps 4 k at
    a time, reading each vector once into a ``let``; other operands are read one element per use.
    """
    from tvm import tirx

    from tilelang.backend.sdk import operand_index, tileop_utils

    acc_dt = str(acc.ty.dtype)
    a, ta, rows_contiguous = a_op
    b, tb, cols_contiguous = b_op
    # per operand: does it vectorise along k, along its outer (m / n) dimension, or not at all
    a_mode = "k" if not ta else ("m" if rows_contiguous and p_rows % LANES == 0 else None)
    b_mode = "k" if tb else ("n" if cols_contiguous and q_cols % LANES == 0 else None)
    if k % LANES or not _aligned(ctx, a):
        a_mode = None
    if k % LANES or b_k0 % LANES or not _aligned(ctx, b):
        b_mode = None
    step_k = LANES if (a_mode or b_mode) else 1
    kq = tirx.Var("kq", "int32")
    stmts: list[Any] = []

    def vec_load(region: Any, index: list[Any]) -> Any:
        load = tirx.BufferLoad(region.source, [*index[:-1], tirx.Ramp(index[-1], 1, LANES)])
        dtype = str(region.source.ty.dtype)
        return load if dtype == acc_dt else tirx.Cast(f"{acc_dt}x{LANES}", load)

    def bind(label: str, value: Any) -> Any:
        var = tirx.Var(f"{name}_{label}", value.ty if hasattr(value, "ty") else value.dtype)
        stmts.append(tirx.Bind(var, value))
        return var

    def lane(vec: Any, i: int) -> Any:
        return tirx.Shuffle([vec], [tirx.const(i, "int32")])

    a_val: dict[tuple[int, int], Any] = {}
    b_val: dict[tuple[int, int], Any] = {}
    for j in range(step_k):
        kk = kq * step_k + j
        for p in range(p_rows):
            if a_mode == "k":
                if j == 0:
                    v = bind(f"a{p}", vec_load(a, operand_index(a, row(p), kk, ta)))
                    for jj in range(LANES):
                        a_val[p, jj] = lane(v, jj)
            elif a_mode == "m":
                if p % LANES == 0:
                    v = bind(f"a{p}_{j}", vec_load(a, operand_index(a, row(p), kk, ta)))
                    for pp in range(LANES):
                        a_val[p + pp, j] = lane(v, pp)
            else:
                a_index = operand_index(a, row(p), kk, ta)
                a_val[p, j] = bind(f"a{p}_{j}", tileop_utils.cast(acc_dt, tirx.BufferLoad(a.source, a_index)))
        for q in range(q_cols):
            if b_mode == "k":
                if j == 0:
                    v = bind(f"b{q}", vec_load(b, operand_index(b, kk + b_k0, col(q), tb)))
                    for jj in range(LANES):
                        b_val[q, jj] = lane(v, jj)
            elif b_mode == "n":
                if q % LANES == 0:
                    v = bind(f"b{q}_{j}", vec_load(b, operand_index(b, kk + b_k0, col(q), tb)))
                    for qq in range(LANES):
                        b_val[q + qq, j] = lane(v, qq)
            else:
                b_index = operand_index(b, kk + b_k0, col(q), tb)
                b_val[q, j] = bind(f"b{q}_{j}", tileop_utils.cast(acc_dt, tirx.BufferLoad(b.source, b_index)))
    for j in range(step_k):
        for p in range(p_rows):
            for q in range(q_cols):
                r = p * q_cols + q
                stmts.append(tirx.BufferStore(acc, tirx.BufferLoad(acc, [r]) + a_val[p, j] * b_val[q, j], [r]))
    from tilelang.transform import utils as C

    return tirx.For(kq, 0, k // step_k, tirx.ForKind.SERIAL, C.seq(stmts))


GEMM = TileOpImpl("tl.gemm", "webgpu_register_blocked", lower_gemm, applies=applies, priority=10)
