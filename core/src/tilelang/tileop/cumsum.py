"""Generic ``tl.cumsum``: inclusive prefix sum (or running max, kind ``"max"``: ``T.cummax``) along one
dimension (forward or reverse), in place or not.

A parallel nest over the other dimensions, a serial scan along `dim`. A partitioned-fragment source is staged
through shared memory first.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.reduce import identity_value, nan_max
from tilelang.tileop.utils import cast
from tilelang.transform import utils as C


def lower_cumsum(ctx: Any) -> Any:
    if len(ctx.args) < 2:
        raise ctx.error("expects (src, dst, dim, reverse[, kind])")
    kind = ctx.str_arg(4, "sum")
    if kind not in ("sum", "max"):
        raise ctx.error(f"unknown scan kind {kind!r}; expected sum or max")
    src, dst = ctx.regions(0, 1)
    nd = len(src.region)
    if len(dst.region) != nd:
        raise ctx.error(f"source and destination must have the same rank, got {nd} and {len(dst.region)}")
    dim = ctx.int_arg(2)
    dim = dim + nd if dim < 0 else dim
    if not 0 <= dim < nd:
        raise ctx.error(f"dim {ctx.int_arg(2)} is out of range for a {nd}-D source")
    reverse = bool(ctx.int_arg(3))
    pre, src = ctx.staged(src) if not src.source.same_as(dst.source) else ([], src)
    keep = [d for d in range(nd) if d != dim]
    n = src.region[dim].extent
    dtype = str(dst.source.ty.dtype)

    def body(vs: list[Any]) -> Any:
        def at(region: Any, pos: Any) -> list[Any]:
            idx = [rg.min for rg in region.region]
            for d, v in zip(keep, vs):
                idx[d] = C.add(region.region[d].min, v)
            idx[dim] = C.add(region.region[dim].min, pos)
            return idx

        k = tirx.Var("k", "int32")
        pos = (n - 1 - k) if reverse else k
        # a running sum in a register: each step reads and writes only element `pos`
        acc = tirx.decl_buffer((1,), dtype, name=f"cum{kind}_acc", scope="local")
        x = cast(dtype, tirx.BufferLoad(src.source, at(src, pos)))
        cur = tirx.BufferLoad(acc, [0])
        step = C.seq([
            tirx.BufferStore(acc, cur + x if kind == "sum" else nan_max(cur, x), [0]),  # NaN stays, as torch
            tirx.BufferStore(dst.source, tirx.BufferLoad(acc, [0]), at(dst, pos)),
        ])
        return C.seq([tirx.AllocBuffer(acc), tirx.BufferStore(acc, identity_value(kind, dtype), [0]),
                      tirx.For(k, 0, n, tirx.ForKind.SERIAL, step)])

    return C.seq([*pre, C.make_parallel_nest([src.region[d].extent for d in keep], body)])


CUMSUM = TileOpImpl("tl.cumsum", "generic", lower_cumsum)
