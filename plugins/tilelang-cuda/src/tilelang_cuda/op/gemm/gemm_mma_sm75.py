"""Turing (sm_75) ``mma.sync``: m16n8k8 for 16-bit operands, m8n8k16 / m8n8k32 for 8- / 4-bit integers."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_sm75_macro_generator import TensorCoreIntrinEmitterSM75
from tilelang_cuda.op.gemm.gemm_mma import GemmMMA

__all__ = ["GemmMMASm75"]


class GemmMMASm75(GemmMMA):
    intrin_emitter_cls = TensorCoreIntrinEmitterSM75
    min_arch = 75

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_turing

        return target_is_turing(target)
