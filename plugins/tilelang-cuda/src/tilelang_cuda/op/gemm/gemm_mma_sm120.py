"""Consumer Blackwell (sm_120) GEMMs: dense ``mma.sync`` as on sm_80; the block-scaled path
(``GEMM_INST_MMA_BLOCK_SCALED``) is not lowered by this backend."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import TensorCoreIntrinEmitterSM120
from tilelang_cuda.op.gemm.gemm_mma import GemmMMA

__all__ = ["GEMM_INST_MMA_BLOCK_SCALED", "GemmMMASm120BlockScaled"]

GEMM_INST_MMA_BLOCK_SCALED = "cuda.mma_block_scaled"


class GemmMMASm120BlockScaled(GemmMMA):
    inst = GEMM_INST_MMA_BLOCK_SCALED
    intrin_emitter_cls = TensorCoreIntrinEmitterSM120
    min_arch = 120

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_sm120

        return target_is_sm120(target)

    def lower(self, ctx: Any) -> Any:
        raise NotImplementedError("block-scaled sm_120 GEMMs are not lowered by the tilelang-cuda backend; "
                                  "dequantize the operands and use T.gemm")
