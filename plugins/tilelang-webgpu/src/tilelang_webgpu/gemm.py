"""``tl.gemm`` on WebGPU: a register-blocked outer product over the thread's own C elements.

Core's layout inference spreads a partitioned C fragment cyclically: element ``f = i * N + j`` of the row-major
tile lives in thread ``f % T`` at register ``f // T``. When ``T`` divides ``N`` or ``N`` divides ``T`` (and the
tile splits evenly) a thread's elements form a grid: rows ``P`` x columns ``Q`` (``T % N == 0``: ``M * N / T``
rows ``r * (T / N) + t // N`` of column ``t % N``; ``N % T == 0``: every row, columns ``t + b * T``).

That grid is often a thin strip (128 threads on a 64x64 tile: 32 rows x 1 column, 33 loads per 32
multiply-adds), so when the workgroup memory allows, C travels per call through a workgroup tile into a more
square block (``bm x bn`` = rows ``t // tn + p * tm``, columns ``t % tn + q * tn``: 4x8 there, 12 loads per 32
multiply-adds); otherwise the thread works on its cyclic grid directly.

Per call the thread fills a private accumulator from C (or zeroes it), then for each ``k`` loads the ``P``
values of A's column and the ``Q`` values of B's row it needs into registers once and does ``P * Q``
multiply-adds (fully unrolled, so the accumulator stays in registers), and writes the accumulator back. The
accesses to C are parallel nests over C, so core's PartitionParallel maps them onto C's registers exactly as
every other access to the fragment. Compared with the generic implementation (one dot product per element, two
workgroup loads per multiply-add) this reads each A element once per thread-row and each B element once per
thread-column. fp32 (or fp16 operands with an fp32/fp16 accumulator); anything else falls back to the generic
implementation.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.tile_ops import TileOpImpl

MAX_REGISTERS = 128  # C elements per thread this implementation keeps in registers
_DTYPES = ("float32", "float16")


def _grid(m: int, n: int, threads: int) -> tuple[int, int] | None:
    """``(P, Q)``: the rows x columns of C one thread holds under the cyclic layout, or None when not a grid."""
    if (m * n) % threads:
        return None
    if threads % n == 0:
        g = threads // n
        return (m // g, 1) if m % g == 0 else None
    if n % threads == 0:
        return m, n // threads
    return None


def _shape(ctx: Any) -> tuple[int, int, int] | None:
    from tilelang.tileop.gemm import gemm_operands
    from tilelang.transform import _common as C

    a, _, c, ta, _, _ = gemm_operands(ctx)
    dims = [C.as_int(c.region[-2].extent), C.as_int(c.region[-1].extent),
            C.as_int(a.region[-2].extent if ta else a.region[-1].extent)]
    return None if None in dims else (dims[0], dims[1], dims[2])


def applies(ctx: Any) -> bool:
    """C a partitioned fragment (the whole tile) whose per-thread elements form a small grid; known dtypes."""
    from tilelang.tileop.gemm import gemm_operands
    from tilelang.transform import _common as C

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
    grid = _grid(shape[0], shape[1], ctx.num_threads)
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


def _shared_bytes(node: Any) -> int:
    from tilelang.transform import _common as C
    from tilelang.transform.plan_shared_memory import dtype_bytes

    total = 0
    for alloc in C.allocations(node):
        buf = alloc.buffer
        if C.scope_of(buf).startswith("shared"):
            count = C.num_elements(buf.ty.shape)
            total += (count or 0) * dtype_bytes(str(buf.ty.dtype))
    return total


def lower_gemm(ctx: Any) -> Any:
    from tvm import tirx

    from tilelang.tileop._util import cast
    from tilelang.tileop.gemm import gemm_operands, operand_index
    from tilelang.transform import _common as C

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    m, n, k = _shape(ctx)  # type: ignore[misc]
    threads = ctx.num_threads
    acc_dt = str(c.source.ty.dtype)
    acc_bytes = 4 if acc_dt == "float32" else 2
    tid = C.linear_thread(ctx.func)
    name = str(c.source.name)
    p_rows, q_cols = _grid(m, n, threads)  # type: ignore[misc]
    block = _block(m, n, threads)
    used = _shared_bytes(ctx.func.body) + (_shared_bytes(C.seq([*pre_a, *pre_b])) if pre_a or pre_b else 0)
    exchange = (block is not None and block[2] + block[3] < p_rows + q_cols
                and used + m * n * acc_bytes <= WORKGROUP_BYTES)
    if exchange:
        # C goes through a workgroup tile into a more square per-thread block (see the module docstring)
        tm, tn, p_rows, q_cols = block  # type: ignore[misc]

        def row(p: int) -> Any:
            return tirx.floordiv(tid, tn) + p * tm

        def col(q: int) -> Any:
            return tirx.floormod(tid, tn) + q * tn
    elif threads % n == 0:
        g = threads // n

        def row(p: int) -> Any:
            return p * g + tirx.floordiv(tid, n)

        def col(q: int) -> Any:
            return tirx.floormod(tid, n)
    else:
        def row(p: int) -> Any:
            return tirx.const(p, "int32")

        def col(q: int) -> Any:
            return q * threads + tid
    regs = p_rows * q_cols

    acc = tirx.decl_buffer((regs,), acc_dt, name=f"{name}_acc", scope="local")
    a_reg = tirx.decl_buffer((p_rows,), acc_dt, name=f"{name}_a", scope="local")
    b_reg = tirx.decl_buffer((q_cols,), acc_dt, name=f"{name}_b", scope="local")

    def c_index(vs: list[Any]) -> list[Any]:
        return operand_index(c, vs[0], vs[1], False)

    def reg_of(vs: list[Any]) -> Any:
        return tirx.floordiv(vs[0] * n + vs[1], threads)

    def each_reg(make: Any) -> list[Any]:
        return [make(p * q_cols + q, row(p), col(q)) for p in range(p_rows) for q in range(q_cols)]

    stmts: list[Any] = [*pre_a, *pre_b, tirx.AllocBuffer(acc), tirx.AllocBuffer(a_reg), tirx.AllocBuffer(b_reg)]
    scratch = None
    if exchange:
        scratch = tirx.decl_buffer((m, n), acc_dt, name=f"{name}_xchg", scope="shared.dyn")
        stmts.append(tirx.AllocBuffer(scratch))
    if clear:
        stmts += [tirx.BufferStore(acc, tirx.const(0, acc_dt), [r]) for r in range(regs)]
    elif exchange:
        stmts.append(C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            scratch, tirx.BufferLoad(c.source, c_index(vs)), vs)))
        stmts += each_reg(lambda r, i, j: tirx.BufferStore(acc, tirx.BufferLoad(scratch, [i, j]), [r]))
    else:
        stmts.append(C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            acc, tirx.BufferLoad(c.source, c_index(vs)), [reg_of(vs)])))

    kk = tirx.Var("kk", "int32")
    step = [tirx.BufferStore(a_reg, cast(acc_dt, tirx.BufferLoad(a.source, operand_index(a, row(p), kk, ta))), [p])
            for p in range(p_rows)]
    step += [tirx.BufferStore(b_reg, cast(acc_dt, tirx.BufferLoad(b.source, operand_index(b, kk, col(q), tb))), [q])
             for q in range(q_cols)]
    for p in range(p_rows):
        for q in range(q_cols):
            r = p * q_cols + q
            step.append(tirx.BufferStore(acc, tirx.BufferLoad(acc, [r])
                                         + tirx.BufferLoad(a_reg, [p]) * tirx.BufferLoad(b_reg, [q]), [r]))
    stmts.append(tirx.For(kk, 0, k, tirx.ForKind.SERIAL, C.seq(step)))
    if exchange:
        stmts += each_reg(lambda r, i, j: tirx.BufferStore(scratch, tirx.BufferLoad(acc, [r]), [i, j]))
        stmts.append(C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            c.source, tirx.BufferLoad(scratch, vs), c_index(vs))))
    else:
        stmts.append(C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
            c.source, tirx.BufferLoad(acc, [reg_of(vs)]), c_index(vs))))
    return C.seq(stmts)


GEMM = TileOpImpl("tl.gemm", "webgpu_register_blocked", lower_gemm, applies=applies, priority=10)
IMPLS = (GEMM,)
