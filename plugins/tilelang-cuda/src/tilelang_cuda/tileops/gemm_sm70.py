"""``tl.gemm`` on Volta (sm_70 / sm_72) tensor cores: ``mma.sync.aligned.m8n8k4`` (fp16 operands, fp16 or fp32
accumulators).

sm_70 has no ldmatrix: every lane reads its operand fragments from the tiles with plain loads. A warp computes
16 x 16 accumulator atoms (`tilelang_cuda.mma_layout` ``VOLTA_F32`` / ``VOLTA_F16``); per K step of 4 and atom,
quad-pair q (lanes 4q..4q+3 and 4q+16..4q+19) runs one m8n8k4 on the 8 x 8 block at rows 8 * (q % 2), columns
8 * (q // 2). PTX ISA fragments ("Matrix Fragments for mma.m8n8k4", ``.row.col``): A value i of a lane is
A[lane % 4 (+4 for lanes 16..31), i], B value i is B[i, lane % 4 (+4 for lanes 16..31)]; transposed operands
only change which tile element a load reads.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import VOLTA_F16, VOLTA_F32, AccumulatorLayout
from tilelang_cuda.tileops.common import addr as _addr
from tilelang_cuda.tileops.common import extern as _extern
from tilelang_cuda.tileops.common import sync as _sync
from tilelang_cuda.tileops.common import unroll as _unroll

__all__ = ["MMA_M8N8K4", "lower_volta_gemm"]

# helper of ``tilelang_cuda/mma.cuh`` (`tilelang_cuda.intrinsics.device`) per accumulator layout
MMA_M8N8K4 = {VOLTA_F32: "tl_mma_m8n8k4_f16_f32", VOLTA_F16: "tl_mma_m8n8k4_f16_f16"}


class _Operand:
    def __init__(self, region: Any):
        self.buf = region.source
        self.base = [r.min for r in region.region]

    def load(self, row: Any, col: Any) -> Any:
        idx = list(self.base)
        idx[-2] = C.add(idx[-2], row)
        idx[-1] = C.add(idx[-1], col)
        return tirx.BufferLoad(self.buf, idx)


def lower_volta_gemm(ctx: Any, layout: AccumulatorLayout) -> Any:
    """The m8n8k4 body of a ``tl.gemm`` whose accumulator the accumulator pass gave a Volta `layout`."""
    ta, tb, clear = bool(ctx.int_arg(3)), bool(ctx.int_arg(4)), bool(ctx.int_arg(6))
    pre_a, a_reg = ctx.staged(ctx.region(0))
    pre_b, b_reg = ctx.staged(ctx.region(1))
    a, b, acc = _Operand(a_reg), _Operand(b_reg), ctx.args[2].source
    ext = [C.as_int(r.extent) for r in a_reg.region[-2:]]
    k = ext[0] if ta else ext[1]
    lane, w_m, w_n = layout.warp_coords(C.linear_thread(ctx.func))
    quad, hi = (lane // 4) % 4, lane // 16
    mi_n, nj_n = layout.mi, layout.ni // 2
    a_frag = tirx.decl_buffer((mi_n * 4,), "float16", name="a_frag", scope="local")
    b_frag = tirx.decl_buffer((nj_n * 4,), "float16", name="b_frag", scope="local")

    def load_a(mi: Any, kk: Any) -> Any:
        row = mi * (16 * layout.wm) + w_m * 16 + (quad % 2) * 8 + lane % 4 + hi * 4
        return C.seq([tirx.BufferStore(a_frag, a.load(kk + i, row) if ta else a.load(row, kk + i), [mi * 4 + i])
                      for i in range(4)])

    def load_b(nj: Any, kk: Any) -> Any:
        col = w_n * (layout.n // layout.wn) + nj * 16 + (quad // 2) * 8 + lane % 4 + hi * 4
        return C.seq([tirx.BufferStore(b_frag, b.load(col, kk + i) if tb else b.load(kk + i, col), [nj * 4 + i])
                      for i in range(4)])

    func = MMA_M8N8K4[layout.instr]

    def step(ks: Any) -> Any:
        kk = ks * 4
        loads = [_unroll(mi_n, "mi", lambda mi: load_a(mi, kk)), _unroll(nj_n, "nj", lambda nj: load_b(nj, kk))]
        issue = _unroll(mi_n, "mi", lambda mi: _unroll(nj_n, "nj", lambda nj: _extern(
            func, _addr(acc, [(mi * nj_n + nj) * 8]), _addr(a_frag, [mi * 4]), _addr(b_frag, [nj * 4]))))
        return C.seq([*loads, issue])

    body: list[Any] = [*pre_a, *pre_b, _sync(), tirx.AllocBuffer(a_frag), tirx.AllocBuffer(b_frag)]
    if clear:
        body.append(_unroll(layout.regs, "r", lambda r: tirx.BufferStore(acc, tirx.const(0, str(acc.ty.dtype)),
                                                                         [r])))
    body += [_unroll(k // 4, "ks", step), _sync()]
    return C.seq(body)
