"""2:4 sparse ``wgmma.mma_async.sp`` GEMMs: not emitted by the tilelang-cuda backend. On sm_90a ``T.gemm_sp`` runs
on ``mma.sp`` (`tilelang_cuda.op.gemm_sp.gemm_sp_mma.GemmSPMMA`), which Hopper executes too."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_SP_INST_WGMMA_SP", "GemmSPWGMMA"]

GEMM_SP_INST_WGMMA_SP = "cuda.wgmma.sp"


class GemmSPWGMMA(CudaGemm):
    inst = GEMM_SP_INST_WGMMA_SP
    min_arch = 90

    def lower(self, ctx: Any) -> Any:
        raise NotImplementedError("2:4 sparse wgmma (wgmma.mma_async.sp) is not emitted by the tilelang-cuda "
                                  "backend; T.gemm_sp lowers to mma.sp on sm_90a (instruction 'cuda.mma.sp')")
