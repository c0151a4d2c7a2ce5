"""2:4 sparse ``wgmma`` GEMMs: not lowered by the tilelang-cuda backend (lowering names the dense alternative)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_SP_INST_WGMMA_SP", "GemmSPWGMMA"]

GEMM_SP_INST_WGMMA_SP = "cuda.wgmma.sp"


class GemmSPWGMMA(CudaGemm):
    inst = GEMM_SP_INST_WGMMA_SP

    def lower(self, ctx: Any) -> Any:
        raise NotImplementedError("2:4 sparse GEMMs (T.gemm_sp) are not lowered by the tilelang-cuda backend; "
                                  "decompress A and use T.gemm")
