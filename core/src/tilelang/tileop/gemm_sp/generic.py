"""Generic ``tl.gemm_sp``: ``C (+)= op(A) @ op(B)`` with A 2:4-sparse, as a parallel nest over C whose dot
product walks A's nonzeros and reads the matching rows of B.

Metadata (`E`, row-major, as TileLang's compressors write it): for 8- and 16-bit A each 4-bit chunk of an E
element describes one group of four dense columns with its two nonzeros' indices (bits 1:0 and 3:2); for
32-bit A each chunk describes a pair of columns with one nonzero at index ``chunk[1:0] // 2``. One E element
covers ``(E bits / 4) * group`` dense columns.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.gemm.generic import operand_index
from tilelang.tileop.gemm_sp.gemm_sp_base import GemmSPBase
from tilelang.tileop.utils import cast
from tilelang.transform import utils as C


def lower_gemm_sp(ctx: Any) -> Any:
    a, e, b, c = (ctx.region(i) for i in range(4))
    ta, te, tb, clear = bool(ctx.int_arg(4)), bool(ctx.int_arg(5)), bool(ctx.int_arg(6)), bool(ctx.int_arg(8))
    pre_a, a = ctx.staged(a)
    pre_e, e = ctx.staged(e)
    pre_b, b = ctx.staged(b)
    pre = [*pre_a, *pre_e, *pre_b]
    a_bits = tvm.DataType(str(a.source.ty.dtype)).bits
    e_bits = tvm.DataType(str(e.source.ty.dtype)).bits
    elem, group = (1, 2) if a_bits == 32 else (2, 4)
    groups_per_word = e_bits // 4
    m, n = [r.extent for r in c.region[-2:]]
    k_sparse = a.region[-2].extent if ta else a.region[-1].extent
    acc = str(c.source.ty.dtype)

    def body(vs: list[Any]) -> Any:
        i, j = vs
        ks = tirx.Var("ks", "int32")
        g, lane = tirx.floordiv(ks, elem), tirx.floormod(ks, elem)
        word = tirx.BufferLoad(e.source, operand_index(e, i, tirx.floordiv(g, groups_per_word), te))
        shift = 4 * tirx.floormod(g, groups_per_word) + 2 * lane
        chunk = tirx.bitwise_and(tirx.shift_right(tirx.Cast("int32", word), shift), tirx.const(3, "int32"))
        index = chunk if elem == 2 else tirx.floordiv(chunk, 2)
        k_dense = g * group + index
        prod = (cast(acc, tirx.BufferLoad(a.source, operand_index(a, i, ks, ta)))
                * cast(acc, tirx.BufferLoad(b.source, operand_index(b, k_dense, j, tb))))
        ci = operand_index(c, i, j, False)
        update = tirx.BufferStore(c.source, tirx.BufferLoad(c.source, ci) + prod, ci)
        stmts = [tirx.BufferStore(c.source, tirx.const(0, acc), ci)] if clear else []
        stmts.append(tirx.For(ks, 0, k_sparse, tirx.ForKind.SERIAL, update))
        return C.seq(stmts)

    return C.seq([*pre, C.make_parallel_nest([m, n], body)])


GEMM_SP = TileOpImpl("tl.gemm_sp", "generic", lower_gemm_sp)


class GemmSPGeneric(GemmSPBase):
    """The generic lowering as a `GemmSPBase` implementation class (instruction ``"generic"``, every target)."""

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return lower_gemm_sp(self.gemm_node)
