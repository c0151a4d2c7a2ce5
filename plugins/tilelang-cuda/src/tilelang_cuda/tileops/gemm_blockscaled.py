"""``T.mma_gemm_blockscaled`` on sm_120a: block-scaled ``mma.sync`` (``kind::mxf4nvf4``) through
`TensorCoreIntrinEmitterSM120`.

`tilelang_cuda.passes.mma_accumulators` has put C in the thread's registers and appended its
`AccumulatorLayout` (warp grid, atoms interleaving row warps) to the call. Per K block of 64 each warp loads its A
and B atoms (``ldmatrix.x4`` of the packed e2m1 tiles) and issues two ``m16n8k64`` MMAs per 16 x 16 atom, each
lane giving the scale word of its selected row / column:

- ``sf_layout="rowmajor"``: the words are read from the scale tiles at each issue (column
  ``(k_start + 64 * kblock) // 64``);
- ``"blockscaled_chunk_kmajor"``: the full-tile path (`TensorCoreIntrinEmitterSM120.mma_blockscaled_fulltile`):
  operand and compact scale-word packages of two K blocks alternate in registers.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import AccumulatorLayout
from tilelang_cuda.passes.mma_accumulators import BLOCK_SCALED, BLOCK_SCALED_ARGS
from tilelang_cuda.tileops.common import is_cuda

__all__ = ["GEMM_BLOCKSCALED", "lower_gemm_blockscaled"]


def _applies(ctx: Any) -> bool:
    return len(ctx.args) >= BLOCK_SCALED_ARGS + 5


def _emitter(ctx: Any, layout: AccumulatorLayout, k: int) -> Any:
    from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import TensorCoreIntrinEmitterSM120

    a, b = ctx.args[0], ctx.args[1]
    emitter = TensorCoreIntrinEmitterSM120(
        a_dtype=str(a.source.ty.dtype), b_dtype=str(b.source.ty.dtype), accum_dtype="float32",
        a_transposed=bool(ctx.int_arg(5)), b_transposed=bool(ctx.int_arg(6)), block_row_warps=layout.wm,
        block_col_warps=layout.wn, warp_row_tiles=layout.m // layout.wm, warp_col_tiles=layout.n // layout.wn,
        chunk=k, thread_var=C.linear_thread(ctx.func), is_blockscaled=True)
    emitter.interleave_warp_rows = True
    return emitter


def lower_gemm_blockscaled(ctx: Any) -> Any:
    from tilelang_cuda.intrinsics.macro.mma_macro_generator import _alloc_registers, collecting
    from tilelang_cuda.tileops.dialect.requirements import MMA_BLOCK_SCALE, require

    require(ctx, MMA_BLOCK_SCALE)
    args = list(ctx.args)
    a, b, acc, sfa, sfb = args[:5]
    layout = AccumulatorLayout.from_args([C.as_int(x) for x in args[BLOCK_SCALED_ARGS:BLOCK_SCALED_ARGS + 5]])
    ta = bool(ctx.int_arg(5))
    aext = [C.as_int(r.extent) for r in a.region[-2:]]
    k = aext[0] if ta else aext[1]
    sf_layout = str(args[12].value)
    if k is None or k % 64:
        raise C.lowering_error(ctx.func, f"T.mma_gemm_blockscaled: K ({k}) must be a static multiple of 64")
    try:
        e = _emitter(ctx, layout, k)
        regs = acc.source
        with collecting() as stmts:
            if ctx.int_arg(8):
                for r in range(layout.regs):
                    stmts.append(tirx.BufferStore(regs, tirx.const(0, "float32"), [r]))
            if sf_layout == "blockscaled_chunk_kmajor":
                e.mma_blockscaled_fulltile(a, b, regs, sfa, sfb, sf_layout=sf_layout)
            else:
                a_regs = _alloc_registers(e.warp_rows * 4, "uint32", "A_regs")
                b_regs = _alloc_registers(e.warp_cols * 4, "uint32", "B_regs")
                for ki in range(k // 64):
                    e.ldmatrix_a(a_regs, a, ki)
                    e.ldmatrix_b(b_regs, b, ki)
                    e.mma(a_regs, b_regs, regs, ki, SFA_buf=sfa, SFB_buf=sfb, k_start=args[9],
                          sf_a_granularity_k=ctx.int_arg(10), sf_b_granularity_k=ctx.int_arg(11),
                          sf_layout=sf_layout)
    except ValueError as exc:
        raise C.lowering_error(ctx.func, f"T.mma_gemm_blockscaled: {exc}") from None
    return C.seq(stmts)


GEMM_BLOCKSCALED = TileOpImpl(BLOCK_SCALED, "cuda_mma_block_scale", lower_gemm_blockscaled, supports_target=is_cuda,
                              applies=_applies, priority=10)
