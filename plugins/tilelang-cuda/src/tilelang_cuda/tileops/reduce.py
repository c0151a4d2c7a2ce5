"""``tl.reduce`` with warp shuffles: one warp per output element, lanes fold strided slices, ``shfl.sync``
butterflies combine them.

For a 2-D float32 reduction: the source is staged to shared memory when it is a partitioned fragment (a
replicated one is read from each thread's own identical copy). Warp ``w`` takes outputs ``w, w + W, ...``;
lane ``l`` folds elements ``l, l + 32, ...`` of that row; ``tl_warp_{sum,max,min}`` (``__shfl_xor_sync``)
give every lane the total; lane 0 writes it to a shared vector. A ``T.Parallel`` nest then moves the vector
into the destination (combining with its old value when ``clear=False``), partitioned like any other nest.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import identity_value
from tilelang.transform import utils as C
from tilelang_cuda.nan_fold import combine_f32
from tilelang_cuda.tileops.common import is_cuda

WARP_FN = {"sum": "tl_warp_sum", "abssum": "tl_warp_sum", "max": "tl_warp_max", "absmax": "tl_warp_max",
           "min": "tl_warp_min"}


def _applies(ctx: Any) -> bool:
    if len(ctx.args) < 4 or ctx.num_threads % 32 or ctx.str_arg(2) not in WARP_FN:
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
    warps = ctx.num_threads // 32
    tid = C.linear_thread(ctx.func)
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
