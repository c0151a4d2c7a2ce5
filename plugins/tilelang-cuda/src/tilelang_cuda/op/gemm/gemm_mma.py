"""``mma.sync`` GEMMs (sm_80+): ldmatrix operands, m16n8k16 / m16n8k8 / m16n8k32 atoms."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_INST_MMA", "GemmMMA"]

GEMM_INST_MMA = "cuda.mma"


class GemmMMA(CudaGemm):
    inst = GEMM_INST_MMA
    intrin_emitter_cls = TensorCoreIntrinEmitter

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_cuda, target_is_turing, target_is_volta

        return target_is_cuda(target) and not (target_is_volta(target) or target_is_turing(target))
