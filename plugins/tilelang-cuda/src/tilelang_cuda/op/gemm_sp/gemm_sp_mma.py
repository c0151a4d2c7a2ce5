"""2:4 sparse ``mma.sp`` GEMMs (sm_80+): ``mma.sp::ordered_metadata`` m16n8k32 (fp16/bf16) and m16n8k64 (int8)
atoms over register accumulators (`tilelang_cuda.tileops.gemm_sp`)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_SP_INST_MMA_SP", "GemmSPMMA"]

GEMM_SP_INST_MMA_SP = "cuda.mma.sp"


class GemmSPMMA(CudaGemm):
    """``T.gemm_sp`` on sparse tensor cores; `lower` serves the calls the accumulator pass prepared (C in
    registers) and names the reason when a call is not one of them."""

    inst = GEMM_SP_INST_MMA_SP

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_cuda, target_is_turing, target_is_volta

        return target_is_cuda(target) and not (target_is_volta(target) or target_is_turing(target))

    @classmethod
    def tile_op_impl(cls) -> Any:
        """The TileOpImpl of ``tl.gemm_sp`` this path lowers through."""
        from tilelang_cuda.tileops.gemm_sp import GEMM_SP

        return GEMM_SP
