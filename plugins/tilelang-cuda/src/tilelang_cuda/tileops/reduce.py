"""``tl.reduce`` with warp shuffles: one warp per output element, lanes fold strided slices, ``shfl.sync``
butterflies combine them.

For a 2-D float32 reduction: the source is staged to shared memory when it is a partitioned fragment (a
replicated one is read from each thread's own identical copy). Warp ``w`` takes outputs ``w, w + W, ...``;
lane ``l`` folds elements ``l, l + 32, ...`` of that row; ``tl_warp_{sum,max,min}`` (``__shfl_xor_sync``)
give every lane the total; lane 0 writes it to a shared vector. A ``T.Parallel`` nest then moves the vector
into the destination (combining with its old value when ``clear=False``), partitioned like any other nest.

A partitioned fragment reduced along its last dimension skips the staging (`REGISTER_REDUCE`, tried first):
with the tile's ``rows x n`` elements spread over ``T`` threads in runs of ``V`` (LayoutInference's cyclic
layout, ``V`` its vector lanes), a row is ``n / V`` runs, held by all ``T`` threads when ``T`` divides that
(``width = T``) or by ``width = n / V`` consecutive threads when that divides ``T``. Each thread folds its own
elements of each of its rows in registers (a parallel nest over the tile, mapped onto the thread's registers
by PartitionParallel), ``shfl.sync`` butterflies combine the ``min(width, 32)`` lanes of a warp, and where a
row spans several warps (or the destination needs rows other threads hold) lane 0 of each warp stores its
partial to a ``rows x max(1, width / 32)`` shared tile, whose partials every thread folds in the same order.
No shared memory at all when one warp holds every row. Float16 / bfloat16 partials shuffle as float32.
"""

from __future__ import annotations

import math
from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import identity_value
from tilelang.layout import linearize
from tilelang.transform import utils as C
from tilelang_cuda.nan_fold import combine_f32
from tilelang_cuda.nan_fold import fold as _fold
from tilelang_cuda.tileops.common import is_cuda

WARP_FN = {"sum": "tl_warp_sum", "abssum": "tl_warp_sum", "max": "tl_warp_max", "absmax": "tl_warp_max",
           "min": "tl_warp_min"}


def _threads(ctx: Any) -> tuple[int, int]:
    """``(first, count)`` of the threads running the call: a warp role's (a warp-specialised kernel's consumers,
    whose fragments layout inference spreads over them), else the block's."""
    return ctx.thread_range or (0, ctx.num_threads)


def _applies(ctx: Any) -> bool:
    if len(ctx.args) < 4 or _threads(ctx)[1] % 32 or ctx.str_arg(2) not in WARP_FN:
        return False
    src, dst = ctx.region(0), ctx.region(1)
    ok_types = str(src.source.ty.dtype) == "float32" and str(dst.source.ty.dtype) == "float32"
    return ok_types and len(src.region) == 2 and len(dst.region) in (1, 2) and ctx.int_arg(3) in (0, 1) and all(
        C.as_int(r.extent) is not None for r in src.region)


def lower_reduce(ctx: Any) -> Any:
    kind, dim, clear = ctx.str_arg(2), ctx.int_arg(3), bool(ctx.int_arg(4, 1))
    pre, src = ctx.staged(ctx.region(0))
    dst = ctx.region(1)
    keep = 1 - dim
    rows, length = C.as_int(src.region[keep].extent), C.as_int(src.region[dim].extent)
    begin, count = _threads(ctx)
    warps = count // 32
    tid = C.linear_thread(ctx.func) - begin if begin else C.linear_thread(ctx.func)
    lane, warp = tid % 32, tid // 32
    partial = tirx.decl_buffer((rows,), "float32", name="red_buf", scope="shared.dyn")
    acc = tirx.decl_buffer((1,), "float32", name="red_acc", scope="local")

    def at(row: Any, col: Any) -> list[Any]:
        idx = [r.min for r in src.region]
        idx[keep], idx[dim] = C.add(idx[keep], row), C.add(idx[dim], col)
        return idx

    o, s = tirx.Var("o", "int32"), tirx.Var("s", "int32")
    row = o * warps + warp
    col = s * 32 + lane
    load = tirx.BufferLoad(src.source, at(row, col))
    fold = tirx.BufferStore(acc, combine_f32(kind, tirx.BufferLoad(acc, [0]), load), [0])
    # warps past the last row run the (uniform) shuffles with the identity: a guard around the whole row would
    # put the staged tile's reads, and so the barrier before them, inside a thread-dependent condition
    in_rows = row < rows if rows % warps else None
    in_row = col < length if length % 32 else None
    fold_ok = in_rows if in_row is None else (in_row if in_rows is None else tirx.And(in_rows, in_row))
    if fold_ok is not None:
        fold = tirx.IfThenElse(fold_ok, fold, None)
    total = tirx.call_extern("float32", WARP_FN[kind], tirx.BufferLoad(acc, [0]), 32)
    per_row = C.seq([
        tirx.BufferStore(acc, identity_value(kind, "float32"), [0]),
        tirx.For(s, 0, (length + 31) // 32, tirx.ForKind.SERIAL, fold),
        tirx.BufferStore(acc, total, [0]),
        tirx.IfThenElse(lane == 0 if in_rows is None else tirx.And(lane == 0, in_rows),
                        tirx.BufferStore(partial, tirx.BufferLoad(acc, [0]), [row]), None),
    ])
    rows_loop = tirx.For(o, 0, (rows + warps - 1) // warps, tirx.ForKind.SERIAL, per_row)

    def write(vs: list[Any]) -> Any:
        (i,) = vs
        idx = [r.min for r in dst.region]
        pos = len(idx) - 1 if len(idx) == 1 else keep
        idx[pos] = C.add(idx[pos], i)
        value = tirx.BufferLoad(partial, [i])
        if not clear:
            value = combine_f32("max" if kind == "absmax" else ("sum" if kind == "abssum" else kind),
                                tirx.BufferLoad(dst.source, idx), value)
        return tirx.BufferStore(dst.source, value, idx)

    return C.seq([*pre, tirx.AllocBuffer(partial), tirx.AllocBuffer(acc), rows_loop,
                  C.make_parallel_nest([rows], write)])


REDUCE = TileOpImpl("tl.reduce", "cuda_warp_shuffle", lower_reduce, supports_target=is_cuda, applies=_applies,
                    priority=10)


# ---------------------------------------------------------------------------------------- register reduction
_FLOATS = ("float16", "bfloat16", "float32")
_TREE_KIND = {"abssum": "sum", "absmax": "max"}


def _full(region: Any) -> list[int] | None:
    """The region's constant extents when it covers its whole buffer from 0, else None."""
    shape = [C.as_int(s) for s in region.source.ty.shape]
    ext = [C.as_int(r.extent) for r in region.region]
    if None in shape or ext != shape or any(not C.is_const(r.min, 0) for r in region.region):
        return None
    return shape  # type: ignore[return-value]


def _register_plan(ctx: Any) -> tuple[Any, Any, list[int], int, int, int] | None:
    """``(src, dst, dst shape, rows, n, width)`` when `REGISTER_REDUCE` serves the call."""
    if len(ctx.args) < 4 or _threads(ctx)[1] % 32 or ctx.str_arg(2) not in WARP_FN or ctx.func is None:
        return None
    src, dst = ctx.region(0), ctx.region(1)
    sbuf, dbuf = src.source, dst.source
    if C.scope_of(sbuf) != "local.fragment" or not ctx.is_partitioned(sbuf):
        return None
    if C.scope_of(dbuf) != "local.fragment" or str(dbuf.ty.dtype) not in _FLOATS:
        return None
    if not str(sbuf.ty.dtype).startswith(("float", "bfloat")):
        return None
    sshape, dshape = _full(src), _full(dst)
    if sshape is None or dshape is None:
        return None
    dim = ctx.int_arg(3)
    if (dim + len(sshape) if dim < 0 else dim) != len(sshape) - 1 or sshape[-1] < 2:
        return None
    kept = [e for e in sshape[:-1] if e != 1]
    if [e for e in dshape if e != 1] != kept:
        return None
    rows, n = math.prod(sshape[:-1]), sshape[-1]
    lanes = ctx.fragments[sbuf].vector_lanes
    threads = _threads(ctx)[1]
    if n % lanes:
        return None
    runs = n // lanes
    if runs % threads == 0:
        width = threads
    elif threads % runs == 0:
        width = runs
    else:
        return None
    if width % 32 and (width > 32 or width & (width - 1)):
        return None  # butterflies need a power of two inside a warp, whole warps beyond it
    return src, dst, dshape, rows, n, width


def _register_applies(ctx: Any) -> bool:
    try:
        return _register_plan(ctx) is not None
    except Exception:
        return False


def lower_register_reduce(ctx: Any) -> Any:
    src, dst, dshape, rows, _, width = _register_plan(ctx)  # type: ignore[misc]
    kind, clear = ctx.str_arg(2), bool(ctx.int_arg(4, 1))
    tree = _TREE_KIND.get(kind, kind)
    begin, threads = _threads(ctx)
    dtype = str(dst.source.ty.dtype)
    group = threads // width  # rows one pass of the threads covers
    own = (rows + group - 1) // group  # partial rows per thread
    tid = C.linear_thread(ctx.func) - begin if begin else C.linear_thread(ctx.func)
    name = str(dst.source.name)
    part = tirx.decl_buffer((own,), dtype, name=f"{name}_part", scope="local")
    stmts: list[Any] = [tirx.AllocBuffer(part)]
    stmts += [tirx.BufferStore(part, identity_value(kind, dtype), [j]) for j in range(own)]
    sshape = [C.as_int(s) for s in src.source.ty.shape]

    # 1. the thread's own elements of each row: element (row, c) of a thread is partial row row // group
    def fold(vs: list[Any]) -> Any:
        row = linearize(vs[:-1], sshape[:-1]) if len(vs) > 1 else tirx.const(0, "int32")
        j = tirx.floordiv(row, group) if group > 1 else row
        x = tirx.BufferLoad(src.source, vs)
        return tirx.BufferStore(part, _fold(kind, tirx.BufferLoad(part, [j]),
                                            x if str(x.ty.dtype) == dtype else tirx.Cast(dtype, x)), [j])

    stmts.append(C.make_parallel_nest(sshape, fold))
    # 2. the lanes of a warp that share a row: butterflies (every lane gets the warp's partial)
    lanes = min(width, 32)
    if lanes > 1:
        for j in range(own):
            v = tirx.BufferLoad(part, [j])
            wide = v if dtype == "float32" else tirx.Cast("float32", v)
            total = tirx.call_extern("float32", WARP_FN[tree], wide, lanes)
            stmts.append(tirx.BufferStore(part, total if dtype == "float32" else tirx.Cast(dtype, total), [j]))
    warps = max(1, width // 32)  # partials per row
    if group == 1 and warps == 1:  # one warp holds every row: each thread has every total
        def total_of(i: Any) -> Any:
            return tirx.BufferLoad(part, [i])
    else:
        # 3. lane 0 of each warp (of each row group) stores its partials; every thread folds them in one order
        scratch = tirx.decl_buffer((rows, warps), dtype, name=f"{name}_red", scope="shared.dyn")
        stmts.insert(1, tirx.AllocBuffer(scratch))
        slot = tirx.floordiv(tirx.floormod(tid, width), 32) if warps > 1 else tirx.const(0, "int32")
        leader = tirx.floormod(tid, lanes) == 0 if lanes > 1 else None
        for j in range(own):
            row = j * group + tirx.floordiv(tid, width) if group > 1 else tirx.const(j, "int32")
            cond = leader
            if rows % group and group > 1:
                cond = row < rows if cond is None else tirx.And(cond, row < rows)
            store = tirx.BufferStore(scratch, tirx.BufferLoad(part, [j]), [row, slot])
            stmts.append(store if cond is None else tirx.IfThenElse(cond, store, None))

        def total_of(i: Any) -> Any:
            acc = tirx.BufferLoad(scratch, [i, 0])
            for p in range(1, warps):
                acc = _fold(tree, acc, tirx.BufferLoad(scratch, [i, p]))
            return acc

    # 4. the destination, a parallel nest like any other (whole on every thread when it is replicated)
    def write(vs: list[Any]) -> Any:
        i = linearize(vs, dshape) if vs else tirx.const(0, "int32")
        value = total_of(i)
        if not clear:
            value = _fold(tree, tirx.BufferLoad(dst.source, vs), value)
        return tirx.BufferStore(dst.source, value, vs)

    stmts.append(C.make_parallel_nest(dshape, write))
    return C.seq(stmts)


REGISTER_REDUCE = TileOpImpl("tl.reduce", "cuda_register_allreduce", lower_register_reduce, supports_target=is_cuda,
                             applies=_register_applies, priority=20)
