"""B in a dot-product unit's layout ("VNNI"), packed once per kernel call before the block grid or per gemm call.

AMX ``tdpbf16ps`` / ``tdpbssd`` and the vector ``vdpbf16ps`` / ``vpdpbusd`` read B in 32-bit lanes that each hold
`group` consecutive k of one column (2 for 16-bit inputs, 4 for int8): the rows of B interleaved in pairs (quads),
column by column. `VnniLayout` puts B in column panels `width` columns wide, each panel ``K_pad x width``
contiguous, K padded with zeros to a multiple of `k_align` (an AMX tile step, or one group), columns past N zero.
One 64-byte row of a panel (``width = 16`` at 4 bytes per lane) is one row of an AMX B tile, or one vector of B.

The pack reads B as integers of its width (`tilelang_cpu.tileops.common.bits_view`): plain B ``[K, N]`` loads
`group` rows of a panel as vectors and interleaves them with one shuffle per panel row; transposed B ``[N, K]``
copies element by element (each column's `group` k are already side by side). Whole-tensor packing follows
`tilelang_cpu.gemm_prepack`'s rules (a parameter the kernel never writes, read at least twice over by the grid,
within ``tl.cpu.gemm_prepack_limit``) and its hoisting: the pack runs before the grid, a parallel loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class VnniLayout(NamedTuple):
    """Column panels `width` wide; `group` consecutive k per 32-bit lane; K padded to a multiple of `k_align`.
    Element ``(k, j)`` of panel ``p`` lies at ``p * k_pad * width + (k // group) * width * group + j * group +
    k % group``."""

    width: int
    group: int
    k_align: int

    def k_pad(self, k: int) -> int:
        return -(-k // self.k_align) * self.k_align

    def panels(self, n: int) -> int:
        return -(-n // self.width)

    def size(self, k: int, n: int) -> int:
        """Elements of the packed ``k x n`` operand."""
        return self.panels(n) * self.k_pad(k) * self.width

    def row(self, kk: Any) -> Any:
        """Offset, within a panel, of the lane row holding k `kk` (a multiple of `group`)."""
        from tvm import tirx

        return tirx.floordiv(kk, self.group) * (self.width * self.group)


class PackedB(NamedTuple):
    """B in a `VnniLayout`: the statements that pack it, and ``at(col, kk)``: (buffer, flat index) of the lane row
    of k `kk` (a multiple of `group`) in the panel of column `col` (a multiple of `width`) of the gemm call."""

    stmts: list[Any]
    at: Callable[[Any, Any], tuple[Any, list[Any]]]
    buffer: Any  # the packed buffer (flat, B's bits dtype)
    whole: bool  # packed once for the whole tensor, before the grid


def pack_loops(src: Any, index_of: Callable[[Any, Any], list[Any]], trans: bool, k: int, n: int,
               layout: VnniLayout, dst: Any, unsigned: bool = False) -> Any:
    """Statements writing ``op(B)[0:k, 0:n]`` into `dst` (flat, of B's `bits_dtype`) in `layout`, zeros in the
    padding; `index_of(kk, j)` gives the indices of ``op(B)[kk, j]`` in `src` (`j` may be a vector when not
    `trans`). `unsigned` (int8 B): each element is stored plus 128 (its sign bit flipped), the unsigned operand of
    ``vpdpbusd``. The outermost loop runs over lane rows (plain B) or panels (transposed B): independent
    iterations, parallel when hoisted."""
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.tileops.common import bits_view, loop

    view, decls = bits_view(src)
    out = dst
    w, g = layout.width, layout.group
    k_pad = layout.k_pad(k)
    panel_size = k_pad * w
    serial = tirx.ForKind.SERIAL
    zero = tirx.const(0, str(out.ty.dtype))

    def biased(value: Any, lanes: int = 1) -> Any:
        if not unsigned:
            return value
        flip = tirx.const(-128, str(out.ty.dtype))
        return tirx.bitwise_xor(value, flip if lanes == 1 else tirx.Broadcast(flip, lanes))

    def element(q: Any, p: Any, t: Any, width: Any) -> Any:
        """Lane row `q`, panel `p`, element `t` of the row (column ``t // g``, k ``q * g + t % g``); `width`:
        the panel's columns (an int, or an expression when it depends on `p`)."""
        j, kk = tirx.floordiv(t, g), q * g + tirx.floormod(t, g)
        dst_index = [p * panel_size + q * (w * g) + t]
        load = tirx.BufferLoad(view, index_of(kk, p * w + j))
        inside = kk < k if isinstance(width, int) and width == w else tirx.And(kk < k, j < width)
        return tirx.IfThenElse(inside, tirx.BufferStore(out, biased(load), dst_index),
                               tirx.BufferStore(out, zero, dst_index))

    def scalar_row(q: Any, p: Any, width: Any) -> Any:
        t = tirx.Var("t", "int32")
        return loop(t, w * g, serial, element(q, p, t, width))

    def outer(var: Any, extent: int, body: Any) -> Any:
        """The outermost loop, the integer views declared inside it (so that a hoisted pack stays one loop)."""
        return loop(var, extent, serial, C.seq([*decls, body]))

    full, tail = divmod(n, w)
    if trans:
        p, q = tirx.Var("p", "int32"), tirx.Var("q", "int32")
        width = tirx.Select(p < full, w, tail) if tail else w
        return outer(p, layout.panels(n), loop(q, k_pad // g, serial, scalar_row(q, p, width)))

    q, p = tirx.Var("q", "int32"), tirx.Var("p", "int32")
    lanes = [tirx.BufferLoad(view, index_of(q * g + e, tirx.Ramp(p * w, 1, w))) for e in range(g)]
    order = [e * w + j for j in range(w) for e in range(g)]
    row = tirx.BufferStore(out, biased(tirx.Shuffle(lanes, order), w * g),
                           [tirx.Ramp(p * panel_size + q * (w * g), 1, w * g)])
    rows = [loop(p, full, serial, tirx.IfThenElse(q < k // g, row, scalar_row(q, p, w)))] if full else []
    if tail:
        rows.append(scalar_row(q, tirx.const(full, "int32"), tail))
    return outer(q, k_pad // g, C.seq(rows))


def pack_per_call(b: Any, trans: bool, k: int, n: int, layout: VnniLayout, unsigned: bool = False) -> PackedB:
    """The gemm call's ``op(B)`` region packed into block-local scratch (`unsigned`: see `pack_loops`)."""
    from tvm import tirx

    from tilelang.backend.sdk import operand_index
    from tilelang_cpu.tileops.common import bits_dtype, scratch

    buf = scratch("B_vnni_u8" if unsigned else "B_vnni", layout.size(k, n), bits_dtype(str(b.source.ty.dtype)))
    stmts = [tirx.AllocBuffer(buf),
             pack_loops(b.source, lambda kk, j: operand_index(b, kk, j, trans), trans, k, n, layout, buf, unsigned)]
    k_pad = layout.k_pad(k)

    def at(col: Any, kk: Any) -> tuple[Any, list[Any]]:
        return buf, [tirx.floordiv(col, layout.width) * (k_pad * layout.width) + layout.row(kk)]

    return PackedB(stmts, at, buf, False)


def pack_whole(ctx: Any, b: Any, trans: bool, k: int, layout: VnniLayout, unsigned: bool = False) -> PackedB | None:
    """B packed whole, once before the grid (see the module docstring; `unsigned`: see `pack_loops`), or None
    when not eligible. The call's
    region must start at a panel boundary and a multiple of `k_align` along K, and span whole `k_align` steps (so
    a tile step never reads past the call's K)."""
    from tvm import DataType, tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_prepack import eligible, hoisted
    from tilelang_cpu.tileops.common import bits_dtype, scratch

    src = b.source
    if len(src.ty.shape) != 2 or k % layout.k_align:
        return None
    rows, cols = (C.as_int(s) for s in src.ty.shape)
    if rows is None or cols is None:
        return None
    k_total, n_total = (cols, rows) if trans else (rows, cols)
    dtype = str(src.ty.dtype)
    size = layout.size(k_total, n_total)
    if not eligible(ctx, b, -2 if trans else -1, size * DataType(dtype).bits // 8):
        return None
    nmin = b.region[-2 if trans else -1].min
    kmin = b.region[-1 if trans else -2].min
    if not (ctx.analyzer.can_prove(tirx.floormod(nmin, layout.width) == 0)
            and ctx.analyzer.can_prove(tirx.floormod(kmin, layout.k_align) == 0)):
        return None
    packed = scratch(f"{src.name}_vnni{'_u8' if unsigned else ''}", size, bits_dtype(dtype))

    def index_of(kk: Any, j: Any) -> list[Any]:
        return [j, kk] if trans else [kk, j]

    stmts = hoisted(packed, pack_loops(src, index_of, trans, k_total, n_total, layout, packed, unsigned))
    k_pad = layout.k_pad(k_total)

    def at(col: Any, kk: Any) -> tuple[Any, list[Any]]:
        panel = tirx.floordiv(nmin + col, layout.width)
        return packed, [panel * (k_pad * layout.width) + layout.row(kmin + kk)]

    return PackedB(stmts, at, packed, True)
