"""Volta (sm_70) ``mma.sync.m8n8k4`` GEMMs. This backend compiles for sm_80 and newer: the class describes the
path (its emitter's tiling) and lowering through it names that limit."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter
from tilelang_cuda.op.gemm.gemm_mma import GemmMMA

__all__ = ["GemmMMASm70"]


class GemmMMASm70(GemmMMA):
    intrin_emitter_cls = TensorCoreIntrinEmitter
    min_arch = 70

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_volta

        return target_is_volta(target)

    def lower(self, ctx: Any) -> Any:
        raise NotImplementedError("sm_70 GEMMs are not lowered by the tilelang-cuda backend, which targets sm_80 and "
                                  "newer")
