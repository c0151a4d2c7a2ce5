"""Generic ``tl.im2col``: the patch matrix of a 2-D convolution, one tile at a time.

``col[i, j] = img[n, oh * stride - pad + kh * dilation, ow * stride - pad + kw * dilation, c]`` where row
``nhw_step * M + i`` is the output position ``(n, oh, ow)`` and column ``c_step * K + j`` the tap ``(kh, kw, c)``
of a ``kernel x kernel`` filter (``KW * C`` columns per ``kh``); taps in the padding, and rows or columns past
the end, read 0. A parallel nest over the tile.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast, guarded, nonunit_dims, region_indices
from tilelang.transform import utils as C


def lower_im2col(ctx: Any) -> Any:
    img, col = ctx.region(0), ctx.region(1)
    nhw_step, c_step = ctx.args[2], ctx.args[3]
    kernel, stride, dilation, pad = (ctx.int_arg(i) for i in range(4, 8))
    n_img, h, w, ch = [r.extent for r in img.region]
    oh_n = (h + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    ow_n = (w + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
    dims = nonunit_dims(col)
    if len(dims) != 2:
        raise ctx.error(f"col must be a 2-D tile, got extents {[str(r.extent) for r in col.region]}")
    bm, bk = (col.region[d].extent for d in dims)
    dtype = str(col.source.ty.dtype)

    def body(vs: list[Any]) -> Any:
        i, j = vs
        ctx.bind_loop_vars(vs, [bm, bk])
        row, tap = nhw_step * bm + i, c_step * bk + j
        n, rest = tirx.floordiv(row, oh_n * ow_n), tirx.floormod(row, oh_n * ow_n)
        oh, ow = tirx.floordiv(rest, ow_n), tirx.floormod(rest, ow_n)
        kh, rem = tirx.floordiv(tap, kernel * ch), tirx.floormod(tap, kernel * ch)
        kw, c = tirx.floordiv(rem, ch), tirx.floormod(rem, ch)
        y = oh * stride - pad + kh * dilation
        x = ow * stride - pad + kw * dilation
        inside = tirx.all(n < n_img, kh < kernel, y >= 0, y < h, x >= 0, x < w)
        idx = [C.add(r.min, v) for r, v in zip(img.region, (n, y, x, c))]
        value = tirx.if_then_else(inside, cast(dtype, tirx.BufferLoad(img.source, idx)), tirx.const(0, dtype))
        di = region_indices(col, dims, vs)
        return guarded(ctx.in_bounds(col.source, di), tirx.BufferStore(col.source, value, di))

    return C.make_parallel_nest([bm, bk], body)


IM2COL = TileOpImpl("tl.im2col", "generic", lower_im2col)
