"""Hopper ``wgmma`` GEMMs (sm_90a): operands read from swizzled shared tiles through matrix descriptors."""

from __future__ import annotations

from tilelang_cuda.intrinsics.macro.wgmma_macro_generator import TensorCoreIntrinEmitter
from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_INST_WGMMA", "GemmWGMMA"]

GEMM_INST_WGMMA = "cuda.wgmma"


class GemmWGMMA(CudaGemm):
    inst = GEMM_INST_WGMMA
    intrin_emitter_cls = TensorCoreIntrinEmitter
    min_arch = 90
