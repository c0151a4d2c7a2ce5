"""MFMA GEMMs (CDNA: gfx90a, gfx942, gfx950): 16x16 tiles, operands gathered from LDS."""

from __future__ import annotations

from typing import Any

from tilelang_rocm.intrinsics.mfma_macro_generator import MatrixCoreIntrinEmitter
from tilelang_rocm.op.gemm.base import RocmGemm

__all__ = ["GEMM_INST_MFMA", "GemmMFMA"]

GEMM_INST_MFMA = "rocm.mfma"


class GemmMFMA(RocmGemm):
    inst = GEMM_INST_MFMA
    intrin_emitter_cls = MatrixCoreIntrinEmitter

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_rocm.target import target_is_cdna

        return target_is_cdna(target)
