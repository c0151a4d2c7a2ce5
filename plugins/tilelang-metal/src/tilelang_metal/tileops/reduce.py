"""``tl.reduce`` on Apple GPUs: one simdgroup per output row, lanes fold strided columns, then ``simd_sum`` /
``simd_max`` / ``simd_min`` combine the 32 partial results.

Floating-point max / min keep NaN as torch does: the lanes fold with core's `nan_max` / `nan_min`, and as
``simd_max`` / ``simd_min`` may drop a NaN, a simdgroup with a NaN partial (``simd_any``) takes ``simd_sum``'s NaN.

Rows are dealt to the block's simdgroups round-robin; lane 0 writes each row's result to a threadgroup
vector, and a parallel nest over the destination merges it in (so the destination keeps the thread layout
layout inference chose). A partitioned-fragment source is staged through threadgroup memory first: whole when
it fits what the kernel's shared tiles leave of the 32 KiB (`threadgroup_budget`), else (a 2-D fragment reduced
along its last dimension, like flash attention's 64x64 fp32 scores) one chunk of rows at a time.
"""

from __future__ import annotations

import math
from typing import Any

from tvm import tirx

from tilelang.backend.sdk import TileOpImpl, dtype_bytes, identity_value, nan_max, nan_min, tileop_utils
from tilelang.layout import unravel
from tilelang.transform import utils as C
from tilelang_metal._tile import SIMD_WIDTH, barrier, const_ints, simd_ids, threadgroup_budget

SIMD_FUNCTIONS = {"sum": "simd_sum", "abssum": "simd_sum", "max": "simd_max", "absmax": "simd_max",
                  "min": "simd_min"}
DTYPES = ("float32", "float16", "int32", "uint32")
STAGE_BUDGET = 16 * 1024  # most bytes of one staged chunk of a partitioned source


def _fold(kind: str, acc: Any, x: Any) -> Any:
    if kind in ("sum", "abssum"):
        return acc + x
    return nan_max(acc, x) if kind in ("max", "absmax") else nan_min(acc, x)


def _dim(ctx: Any, nd: int) -> int:
    dim = ctx.int_arg(3)
    return dim + nd if dim < 0 else dim


def applies(ctx: Any) -> bool:
    """Whole simdgroups, a known kind and dtype, constant extents."""
    if not ctx.has_threads or ctx.num_threads % SIMD_WIDTH or len(ctx.args) < 4:
        return False
    try:
        src, dst = ctx.region(0), ctx.region(1)
    except Exception:
        return False
    nd = len(src.region)
    if ctx.str_arg(2) not in SIMD_FUNCTIONS or not 0 <= _dim(ctx, nd) < nd:
        return False
    if str(dst.source.ty.dtype) not in DTYPES or len(dst.region) not in (nd - 1, nd):
        return False
    return const_ints([r.extent for r in src.region]) is not None


def _chunk_rows(ctx: Any, src: Any, dim: int) -> int | None:
    """Rows per staged chunk for a whole 2-D partitioned fragment reduced along dim 1 (None: stage it whole)."""
    buf = src.source
    shape = const_ints(buf.ty.shape)
    if not ctx.is_partitioned(buf) or dim != 1 or shape is None or len(shape) != 2:
        return None
    if not all(C.is_const(r.min, 0) for r in src.region) or const_ints([r.extent for r in src.region]) != shape:
        return None
    rows, width = shape
    row_bytes = width * dtype_bytes(str(buf.ty.dtype))
    budget = threadgroup_budget(ctx, STAGE_BUDGET)
    fits = [d for d in range(1, rows + 1) if rows % d == 0 and d * row_bytes <= budget]
    return max(fits) if fits and max(fits) < rows else None


def lower_reduce(ctx: Any) -> Any:
    src, dst = ctx.region(0), ctx.region(1)
    kind, nd = ctx.str_arg(2), len(src.region)
    dim, clear = _dim(ctx, nd), bool(ctx.int_arg(4, 1))
    per_chunk = _chunk_rows(ctx, src, dim)
    source = src
    pre: list[Any] = []
    if per_chunk is None:
        pre, src = ctx.staged(src)
    dtype = str(dst.source.ty.dtype)
    keep = [d for d in range(nd) if d != dim]
    kept = [int(C.as_int(src.region[d].extent)) for d in keep]
    rows, width = math.prod(kept), int(C.as_int(src.region[dim].extent))
    warps = ctx.num_threads // SIMD_WIDTH
    warp, lane = simd_ids(ctx)
    partial = tirx.decl_buffer((rows,), dtype, name=f"{dst.source.name}_simd", scope="shared.dyn")
    acc = tirx.decl_buffer((1,), dtype, name="simd_acc", scope="local")
    ch = tirx.Var("ch", "int32")
    chunk = rows if per_chunk is None else per_chunk
    stage = None
    if per_chunk is not None:
        stage = tirx.decl_buffer((per_chunk, width), str(source.source.ty.dtype), name=f"{source.source.name}_stage",
                                 scope="shared.dyn")

    def element(row: Any, col: Any) -> Any:
        if stage is not None:  # `row` counts rows of the current chunk
            x = tileop_utils.cast(dtype, tirx.BufferLoad(stage, [row, col]))
            return tirx.abs(x) if kind.startswith("abs") else x
        idx = [r.min for r in src.region]
        for d, v in zip(keep, unravel(row, kept) if kept else []):
            idx[d] = C.add(src.region[d].min, v)
        idx[dim] = C.add(src.region[dim].min, col)
        x = tileop_utils.cast(dtype, tirx.BufferLoad(src.source, idx))
        return tirx.abs(x) if kind.startswith("abs") else x

    it, s = tirx.Var("it", "int32"), tirx.Var("s", "int32")
    local_row, col = it * warps + warp, s * SIMD_WIDTH + lane
    row = local_row if stage is None else ch * chunk + local_row
    step = tirx.BufferStore(acc, _fold(kind, tirx.BufferLoad(acc, [0]), element(local_row, col)), [0])
    if width % SIMD_WIDTH:
        step = tirx.IfThenElse(col < width, step, None)
    partial_acc = tirx.BufferLoad(acc, [0])
    total = tirx.call_extern(dtype, SIMD_FUNCTIONS[kind], partial_acc)
    if kind in ("max", "min", "absmax") and dtype.startswith("float"):  # any NaN partial: the sum is NaN
        any_nan = tirx.call_extern("bool", "simd_any", tirx.isnan(partial_acc))
        total = tirx.Select(any_nan, tirx.call_extern(dtype, "simd_sum", partial_acc), total)
    per_row = C.seq([
        tirx.BufferStore(acc, identity_value(kind, dtype), [0]),
        tirx.For(s, 0, -(-width // SIMD_WIDTH), tirx.ForKind.SERIAL, step),
        tirx.BufferStore(acc, total, [0]),
        tirx.IfThenElse(lane == 0, tirx.BufferStore(partial, tirx.BufferLoad(acc, [0]), [row]), None),
    ])
    if chunk % warps:
        per_row = tirx.IfThenElse(local_row < chunk, per_row, None)
    simd_rows = tirx.For(it, 0, -(-chunk // warps), tirx.ForKind.SERIAL, per_row)
    if stage is None:
        simd = C.seq([tirx.AllocBuffer(acc), simd_rows])
    else:  # each chunk: its owners copy its rows to `stage`, the simdgroups reduce them, then all wait
        buf = source.source

        def fill(vs: list[Any]) -> Any:
            store = tirx.BufferStore(stage, tirx.BufferLoad(buf, vs), [vs[0] - ch * chunk, vs[1]])
            return tirx.IfThenElse(tirx.And(vs[0] >= ch * chunk, vs[0] < ch * chunk + chunk), store, None)

        body = C.seq([C.make_parallel_nest([rows, width], fill), barrier(), simd_rows, barrier()])
        simd = C.seq([tirx.AllocBuffer(stage), tirx.AllocBuffer(acc),
                      tirx.For(ch, 0, rows // chunk, tirx.ForKind.SERIAL, body)])

    keepdim = len(dst.region) == nd

    def merge(vs: list[Any]) -> Any:
        dvs = list(vs)
        if keepdim:
            dvs.insert(dim, 0)
        di = [C.add(r.min, v) for r, v in zip(dst.region, dvs)]
        flat: Any = 0
        for v, e in zip(vs, kept):
            flat = flat * e + v
        value = tirx.BufferLoad(partial, [flat])
        if not clear:
            value = _fold(kind, tirx.BufferLoad(dst.source, di), value)
        return tirx.BufferStore(dst.source, value, di)

    return C.seq([*pre, tirx.AllocBuffer(partial), simd, C.make_parallel_nest(kept, merge)])


REDUCE = TileOpImpl("tl.reduce", "metal_simd", lower_reduce, applies=applies, priority=10)
