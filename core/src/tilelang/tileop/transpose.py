"""Generic ``tl.transpose``: ``dst[..., j, i] = src[..., i, j]`` as a parallel loop nest over the source region.

Like ``tl.copy``, reads outside the source buffer give 0 and writes outside the destination buffer are
skipped (the tests are emitted only where they cannot be proven), and the value is cast to dst's dtype.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast, guarded
from tilelang.transform import utils as C


def lower_transpose(ctx: Any) -> Any:
    if len(ctx.args) < 2:
        raise ctx.error("expects (src, dst)")
    # a partitioned source fragment is read across threads: stage it (LayoutInference counts on it, role "s")
    pre, src = ctx.staged(ctx.region(0))
    dst = ctx.region(1)
    nd_s, nd_d = len(src.region), len(dst.region)
    if nd_s < 2 or nd_d != nd_s:
        raise ctx.error(f"source and destination must have the same rank (at least 2), got {nd_s} and {nd_d}")
    ext = [r.extent for r in src.region]
    sbuf, dbuf = src.source, dst.source
    dtype = str(dbuf.ty.dtype)

    def body(vs: list[Any]) -> Any:
        ctx.bind_loop_vars(vs, ext)
        si = [C.add(r.min, v) for r, v in zip(src.region, vs)]
        dvs = [*vs[:-2], vs[-1], vs[-2]]
        di = [C.add(r.min, v) for r, v in zip(dst.region, dvs)]
        value: Any = cast(dtype, tirx.BufferLoad(sbuf, si))
        read_ok = ctx.in_bounds(sbuf, si)
        if read_ok is not None:
            value = tirx.if_then_else(read_ok, value, tirx.const(0, dtype))
        return guarded(ctx.in_bounds(dbuf, di), tirx.BufferStore(dbuf, value, di))

    return C.seq([*pre, C.make_parallel_nest(ext, body)])


TRANSPOSE = TileOpImpl("tl.transpose", "generic", lower_transpose)
