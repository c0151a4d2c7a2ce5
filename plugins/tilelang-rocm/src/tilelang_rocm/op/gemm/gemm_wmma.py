"""WMMA GEMMs (RDNA3 gfx11, RDNA4 gfx12; wave32): 16x16x16 fp16 / bf16 tiles into fp32."""

from __future__ import annotations

from typing import Any

from tilelang_rocm.intrinsics.wmma_macro_generator import WMMAIntrinEmitter
from tilelang_rocm.op.gemm.base import RocmGemm

__all__ = ["GEMM_INST_WMMA", "GemmWMMA"]

GEMM_INST_WMMA = "rocm.wmma"


class GemmWMMA(RocmGemm):
    inst = GEMM_INST_WMMA
    intrin_emitter_cls = WMMAIntrinEmitter

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_rocm.target import target_is_rdna

        return target_is_rdna(target)
