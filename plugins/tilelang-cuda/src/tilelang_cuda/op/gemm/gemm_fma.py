"""CUDA-core GEMMs: the scalar fused multiply-add path for dtypes and shapes no tensor-core path serves (core's
generic ``T.gemm`` lowering, each thread a strided share of the output tile)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.op.gemm.base import CudaGemm

__all__ = ["GEMM_INST_FMA", "GemmFMA"]

GEMM_INST_FMA = "cuda.fma"


class GemmFMA(CudaGemm):
    inst = GEMM_INST_FMA
    min_arch = 70

    @classmethod
    def tile_op_impl(cls) -> Any:
        """Core's generic ``tl.gemm`` lowering (priority 0, any target)."""
        from tilelang.backend.sdk import tile_op_impls_for

        return min(tile_op_impls_for("tl.gemm", {"kind": "cuda"}), key=lambda i: i.priority)
