"""Consumer Blackwell (sm_120) GEMMs: dense ``mma.sync`` as on sm_80, and the block-scaled path
(``GEMM_INST_MMA_BLOCK_SCALED``: ``T.mma_gemm_blockscaled`` on ``kind::mxf4nvf4`` block-scaled ``mma.sync``,
lowered by `tilelang_cuda.tileops.gemm_blockscaled` through `TensorCoreIntrinEmitterSM120`)."""

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
    supported_sf_layouts = ("rowmajor", "blockscaled_chunk_kmajor")

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_sm120

        return target_is_sm120(target)

    @classmethod
    def tile_op_impl(cls) -> Any:
        """The lowering of ``tl.mma_gemm_blockscaled`` (`tilelang_cuda.tileops.gemm_blockscaled`)."""
        from tilelang_cuda.tileops.gemm_blockscaled import GEMM_BLOCKSCALED

        return GEMM_BLOCKSCALED
