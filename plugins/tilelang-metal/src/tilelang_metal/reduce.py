"""``tl.reduce`` on Apple GPUs: one simdgroup per output row, lanes fold strided columns, then ``simd_sum`` /
``simd_max`` / ``simd_min`` combine the 32 partial results.

Rows are dealt to the block's simdgroups round-robin; lane 0 writes each row's result to a threadgroup
vector, and a parallel nest over the destination merges it in (so the destination keeps the thread layout
layout inference chose). A partitioned-fragment source is staged through threadgroup memory first.
"""

from __future__ import annotations

import math
from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.layout import unravel
from tilelang.tileop._util import cast
from tilelang.tileop.reduce import identity_value
from tilelang.transform import _common as C
from tilelang_metal._tile import SIMD_WIDTH, const_ints, simd_ids

SIMD_FUNCTIONS = {"sum": "simd_sum", "abssum": "simd_sum", "max": "simd_max", "absmax": "simd_max",
                  "min": "simd_min"}
DTYPES = ("float32", "float16", "int32", "uint32")


def _fold(kind: str, acc: Any, x: Any) -> Any:
    if kind in ("sum", "abssum"):
        return acc + x
    return tirx.Max(acc, x) if kind in ("max", "absmax") else tirx.Min(acc, x)


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


def lower_reduce(ctx: Any) -> Any:
    src, dst = ctx.region(0), ctx.region(1)
    kind, nd = ctx.str_arg(2), len(src.region)
    dim, clear = _dim(ctx, nd), bool(ctx.int_arg(4, 1))
    pre, src = ctx.staged(src)
    dtype = str(dst.source.ty.dtype)
    keep = [d for d in range(nd) if d != dim]
    kept = [int(C.as_int(src.region[d].extent)) for d in keep]
    rows, width = math.prod(kept), int(C.as_int(src.region[dim].extent))
    warps = ctx.num_threads // SIMD_WIDTH
    warp, lane = simd_ids(ctx)
    partial = tirx.decl_buffer((rows,), dtype, name=f"{dst.source.name}_simd", scope="shared.dyn")
    acc = tirx.decl_buffer((1,), dtype, name="simd_acc", scope="local")

    def element(row: Any, col: Any) -> Any:
        idx = [r.min for r in src.region]
        for d, v in zip(keep, unravel(row, kept) if kept else []):
            idx[d] = C.add(src.region[d].min, v)
        idx[dim] = C.add(src.region[dim].min, col)
        x = cast(dtype, tirx.BufferLoad(src.source, idx))
        return tirx.abs(x) if kind.startswith("abs") else x

    it, s = tirx.Var("it", "int32"), tirx.Var("s", "int32")
    row, col = it * warps + warp, s * SIMD_WIDTH + lane
    step = tirx.BufferStore(acc, _fold(kind, tirx.BufferLoad(acc, [0]), element(row, col)), [0])
    if width % SIMD_WIDTH:
        step = tirx.IfThenElse(col < width, step, None)
    total = tirx.call_extern(dtype, SIMD_FUNCTIONS[kind], tirx.BufferLoad(acc, [0]))
    per_row = C.seq([
        tirx.BufferStore(acc, identity_value(kind, dtype), [0]),
        tirx.For(s, 0, -(-width // SIMD_WIDTH), tirx.ForKind.SERIAL, step),
        tirx.BufferStore(acc, total, [0]),
        tirx.IfThenElse(lane == 0, tirx.BufferStore(partial, tirx.BufferLoad(acc, [0]), [row]), None),
    ])
    if rows % warps:
        per_row = tirx.IfThenElse(row < rows, per_row, None)
    simd = C.seq([tirx.AllocBuffer(acc), tirx.For(it, 0, -(-rows // warps), tirx.ForKind.SERIAL, per_row)])

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
