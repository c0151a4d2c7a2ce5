"""Generic ``tl.copy``: a parallel loop nest over the destination region, one element per iteration.

Reads outside the source buffer give 0 and writes outside the destination are skipped, so tiles that overhang
a dynamic or non-multiple shape stay correct (the bounds tests are emitted only where they cannot be proven).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast, guarded, nonunit_dims, region_indices
from tilelang.transform import utils as C


def lower_copy(ctx: Any) -> Any:
    args = ctx.args
    if len(args) < 2:
        raise ctx.error("expects (src, dst)")
    src, dst = ctx.regions(0, 1)
    sdims, ddims = nonunit_dims(src), nonunit_dims(dst)
    sext = [src.region[d].extent for d in sdims]
    dext = [dst.region[d].extent for d in ddims]
    if len(sext) != len(dext) or any(
        C.as_int(a) is not None and C.as_int(b) is not None and C.as_int(a) != C.as_int(b) for a, b in zip(sext, dext)
    ):
        raise ctx.error(f"source extents {[str(e) for e in sext]} differ from destination extents "
                        f"{[str(e) for e in dext]}")
    sbuf, dbuf = src.source, dst.source
    dtype = str(dbuf.ty.dtype)

    def body(vs: list[Any]) -> Any:
        ctx.bind_loop_vars(vs, dext)
        si, di = region_indices(src, sdims, vs), region_indices(dst, ddims, vs)
        value: Any = cast(dtype, tirx.BufferLoad(sbuf, si))
        read_ok = ctx.in_bounds(sbuf, si)
        if read_ok is not None:
            value = tirx.if_then_else(read_ok, value, tirx.const(0, dtype))
        return guarded(ctx.in_bounds(dbuf, di), tirx.BufferStore(dbuf, value, di))

    return C.make_parallel_nest(dext, body)


COPY = TileOpImpl("tl.copy", "generic", lower_copy)
