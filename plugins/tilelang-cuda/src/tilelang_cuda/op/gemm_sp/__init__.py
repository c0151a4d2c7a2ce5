"""2:4 sparse GEMM paths (``tilelang.cuda.op.gemm_sp``): ``mma.sp`` (sm_80+, `GemmSPMMA`) and ``wgmma.sp`` (sm_90a,
`GemmSPWGMMA`), registered with core's GEMM_SP registry (``tilelang.tileop.gemm_sp.registry``)."""

from __future__ import annotations

import importlib
import importlib.util

from tilelang_cuda.op.gemm_sp.gemm_sp_mma import GEMM_SP_INST_MMA_SP, GemmSPMMA
from tilelang_cuda.op.gemm_sp.gemm_sp_wgmma import GEMM_SP_INST_WGMMA_SP, GemmSPWGMMA

__all__ = ["GEMM_SP_INST_MMA_SP", "GEMM_SP_INST_WGMMA_SP", "GemmSPMMA", "GemmSPWGMMA"]


def _register() -> None:
    if importlib.util.find_spec("tilelang.tileop.gemm_sp") is None:
        return
    try:
        registry = importlib.import_module("tilelang.tileop.gemm_sp.registry")
    except ImportError:  # this core has no GEMM_SP registry
        return
    registry.register_gemm_sp_impl("cuda.mma.sp", GEMM_SP_INST_MMA_SP, GemmSPMMA.matches, GemmSPMMA)
    registry.register_gemm_sp_impl("cuda.wgmma.sp", GEMM_SP_INST_WGMMA_SP, GemmSPWGMMA.matches, GemmSPWGMMA)


_register()
