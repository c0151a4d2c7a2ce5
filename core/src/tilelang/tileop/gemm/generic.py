"""Generic ``tl.gemm``: ``C (+)= op(A) @ op(B)`` as a parallel nest over C with a serial dot product per element.

Operands are cast to C's dtype before multiplying (fp16 inputs accumulate in fp32 when C is fp32). A or B held
in a partitioned fragment is first staged through shared memory so every thread can read all of it.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.gemm.gemm_base import GemmBase
from tilelang.tileop.utils import cast
from tilelang.transform import utils as C


def gemm_operands(ctx: Any) -> tuple[Any, Any, Any, bool, bool, bool]:
    """``(A, B, C, trans_A, trans_B, clear_accum)`` with shapes checked."""
    if len(ctx.args) < 3:
        raise ctx.error("expects (A, B, C, trans_A, trans_B, policy, clear_accum)")
    a, b, c = ctx.region(0), ctx.region(1), ctx.region(2)
    for name, r in (("A", a), ("B", b), ("C", c)):
        if len(r.region) < 2:
            raise ctx.error(f"{name} must have at least 2 dimensions, got {len(r.region)}")
    ta, tb, clear = bool(ctx.int_arg(3)), bool(ctx.int_arg(4)), bool(ctx.int_arg(6))
    (am, ak) = [r.extent for r in a.region[-2:]][:: -1 if ta else 1]
    (bk, bn) = [r.extent for r in b.region[-2:]][:: -1 if tb else 1]
    cm, cn = [r.extent for r in c.region[-2:]]
    for what, x, y in (("M", am, cm), ("N", bn, cn), ("K", ak, bk)):
        if C.as_int(x) is not None and C.as_int(y) is not None and C.as_int(x) != C.as_int(y):
            raise ctx.error(f"{what} of the operands differ ({x} vs {y}); "
                            f"A{[str(r.extent) for r in a.region]} B{[str(r.extent) for r in b.region]} "
                            f"C{[str(r.extent) for r in c.region]} trans_A={ta} trans_B={tb}")
    return a, b, c, ta, tb, clear


def operand_index(region: Any, row: Any, col: Any, trans: bool) -> list[Any]:
    """Buffer indices of logical element (row, col) of a 2-D operand stored in the last two dims of `region`."""
    idx = [r.min for r in region.region]
    r, c = (col, row) if trans else (row, col)
    idx[-2] = C.add(region.region[-2].min, r)
    idx[-1] = C.add(region.region[-1].min, c)
    return idx


def lower_gemm(ctx: Any) -> Any:
    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    m, n = [r.extent for r in c.region[-2:]]
    k = b.region[-1].extent if tb else b.region[-2].extent
    acc = str(c.source.ty.dtype)

    def body(vs: list[Any]) -> Any:
        i, j = vs
        kk = tirx.Var("kk", "int32")
        ci = operand_index(c, i, j, False)
        prod = (cast(acc, tirx.BufferLoad(a.source, operand_index(a, i, kk, ta)))
                * cast(acc, tirx.BufferLoad(b.source, operand_index(b, kk, j, tb))))
        update = tirx.BufferStore(c.source, tirx.BufferLoad(c.source, ci) + prod, ci)
        stmts = [tirx.BufferStore(c.source, tirx.const(0, acc), ci)] if clear else []
        stmts.append(tirx.For(kk, 0, k, tirx.ForKind.SERIAL, update))
        return C.seq(stmts)

    return C.seq([*pre_a, *pre_b, C.make_parallel_nest([m, n], body)])


GEMM = TileOpImpl("tl.gemm", "generic", lower_gemm)


class GemmGeneric(GemmBase):
    """The generic lowering as a `GemmBase` implementation class (instruction ``"generic"``, every target)."""

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        return lower_gemm(self.gemm_node)
