"""2:4 sparse GEMM paths (``tilelang.cuda.op.gemm_sp``): not lowered by the tilelang-cuda backend."""

from tilelang_cuda.op.gemm_sp.gemm_sp_mma import GEMM_SP_INST_MMA_SP, GemmSPMMA
from tilelang_cuda.op.gemm_sp.gemm_sp_wgmma import GEMM_SP_INST_WGMMA_SP, GemmSPWGMMA

__all__ = ["GEMM_SP_INST_MMA_SP", "GEMM_SP_INST_WGMMA_SP", "GemmSPMMA", "GemmSPWGMMA"]
