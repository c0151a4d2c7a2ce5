"""Generic ``tl.fill``: a parallel loop nest storing the (cast) value into every element of the region."""

from __future__ import annotations

from typing import Any

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast, guarded, nonunit_dims, region_indices
from tilelang.transform import utils as C


def lower_fill(ctx: Any) -> Any:
    from tvm import tirx

    if len(ctx.args) < 2:
        raise ctx.error("expects (dst, value)")
    dst = ctx.region(0)
    value = ctx.args[1]
    dtype = str(dst.source.ty.dtype)
    dims = nonunit_dims(dst)
    ext = [dst.region[d].extent for d in dims]

    def body(vs: list[Any]) -> Any:
        ctx.bind_loop_vars(vs, ext)
        idx = region_indices(dst, dims, vs)
        return guarded(ctx.in_bounds(dst.source, idx), tirx.BufferStore(dst.source, cast(dtype, value), idx))

    return C.make_parallel_nest(ext, body)


FILL = TileOpImpl("tl.fill", "generic", lower_fill)
