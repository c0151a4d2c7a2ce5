"""``tl.gemm`` on the CPU as a plain loop nest (registered for llvm / c with priority 1): the fallback of the
register-blocked micro-kernel (`tilelang_cpu.tileops.gemm`).

Core's generic gemm computes one dot product per output element (a strided walk down B's column). On the CPU a
block is one thread, so the whole C tile is ours: loop ``i, k, j`` with the ``j`` loop over a row of C and of B
(contiguous, vectorised by LLVM into FMAs), A[i, k] broadcast.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl
from tilelang_cpu.tileops.common import llvm_vectors

_MAX_VECTOR = 64


def _applies(ctx: Any) -> bool:
    from tilelang.transform import utils as C

    if ctx.num_threads != 1 or len(ctx.args) < 3:
        return False
    c = ctx.region(2)
    return C.as_int(c.region[-1].extent) is not None


def lower_gemm_cpu(ctx: Any) -> Any:
    from tvm import tirx

    from tilelang.backend.sdk import gemm_operands, operand_index, tileop_utils
    from tilelang.transform import utils as C

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    m, n = [r.extent for r in c.region[-2:]]
    k = b.region[-1].extent if tb else b.region[-2].extent
    acc = str(c.source.ty.dtype)
    i, kk, j = (tirx.Var(x, "int32") for x in ("i", "kk", "j"))
    ci = operand_index(c, i, j, False)
    prod = (tileop_utils.cast(acc, tirx.BufferLoad(a.source, operand_index(a, i, kk, ta)))
            * tileop_utils.cast(acc, tirx.BufferLoad(b.source, operand_index(b, kk, j, tb))))
    vector = llvm_vectors(ctx) and not tb and (C.as_int(n) or 0) <= _MAX_VECTOR
    jkind = tirx.ForKind.VECTORIZED if vector else tirx.ForKind.SERIAL
    update = tirx.For(j, 0, n, jkind, tirx.BufferStore(c.source, tirx.BufferLoad(c.source, ci) + prod, ci))
    body = tirx.For(kk, 0, k, tirx.ForKind.SERIAL, update)
    if clear:
        zero = tirx.For(j, 0, n, jkind, tirx.BufferStore(c.source, tirx.const(0, acc), ci))
        body = C.seq([zero, body])
    return tirx.For(i, 0, m, tirx.ForKind.SERIAL, body)


GEMM_ROW_FMA = TileOpImpl("tl.gemm", "cpu_row_fma", lower_gemm_cpu, applies=_applies, priority=1)
