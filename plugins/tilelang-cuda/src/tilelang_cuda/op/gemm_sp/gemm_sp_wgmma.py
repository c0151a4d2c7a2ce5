"""2:4 sparse ``wgmma.mma_async.sp`` GEMMs (sm_90a, fp16/bf16): ``m64nNk32`` per warpgroup, A and metadata in
registers, B through a matrix descriptor (`tilelang_cuda.tileops.gemm_sp`)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_SP_INST_WGMMA_SP", "GemmSPWGMMA"]

GEMM_SP_INST_WGMMA_SP = "cuda.wgmma.sp"


class GemmSPWGMMA(CudaGemm):
    """``T.gemm_sp`` on Hopper's sparse warpgroup MMA; `lower` serves calls whose accumulator layout the
    accumulator pass chose for wgmma (64-row blocks per warpgroup) and names the reason otherwise."""

    inst = GEMM_SP_INST_WGMMA_SP
    min_arch = 90

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.passes.mma_accumulators import arch_of
        from tilelang_cuda.target import target_is_cuda

        return target_is_cuda(target) and arch_of(target) == (90, True)

    @classmethod
    def tile_op_impl(cls) -> Any:
        """The TileOpImpl of ``tl.gemm_sp`` this path lowers through."""
        from tilelang_cuda.tileops.gemm_sp import GEMM_SP

        return GEMM_SP

    def lower(self, ctx: Any) -> Any:
        from tilelang_cuda.mma_layout import WGMMA
        from tilelang_cuda.tileops.gemm_sp import LAYOUT_ARGS

        layout = ctx.args[LAYOUT_ARGS + 4] if len(ctx.args) >= LAYOUT_ARGS + 5 else None
        if layout is None or int(layout) != WGMMA:
            raise ValueError("GemmSPWGMMA: this gemm_sp is not laid out for wgmma.sp (it needs fp16/bf16 operands, "
                             "sm_90a and a block M that is a multiple of 64 per warpgroup); it runs on mma.sp "
                             "(instruction 'cuda.mma.sp')")
        return super().lower(ctx)
