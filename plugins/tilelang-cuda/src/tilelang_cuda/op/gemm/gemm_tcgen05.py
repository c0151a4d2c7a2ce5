"""Blackwell ``tcgen05.mma`` GEMMs (sm_100a): accumulators in tensor memory (``T.tcgen05_gemm``)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.tcgen05_macro_generator import TensorCoreIntrinEmitter
from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_INST_TCGEN05", "GemmTCGEN5"]

GEMM_INST_TCGEN05 = "cuda.tcgen05"


class GemmTCGEN5(CudaGemm):
    inst = GEMM_INST_TCGEN05
    intrin_emitter_cls = TensorCoreIntrinEmitter
    min_arch = 100

    @classmethod
    def tile_op_impl(cls) -> Any:
        """tcgen05 GEMMs are the ``tl.tcgen05_gemm`` intrinsic's lowering (`tilelang_cuda.tileops.dialect`)."""
        from tilelang_cuda.tileops.dialect import IMPLS

        return next(i for i in IMPLS if i.op == "tl.tcgen05_gemm")
