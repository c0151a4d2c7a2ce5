"""Volta (sm_70 / sm_72) ``mma.sync.m8n8k4`` GEMMs: ``T.gemm`` of fp16 operands into an fp16 or fp32
accumulator runs on Volta's tensor cores (`tilelang_cuda.tileops.gemm_sm70`); other dtypes run on CUDA cores
(`GemmFMA`)."""

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
        """The m8n8k4 body of the ``tl.gemm`` call of tile-op context `ctx`, whose accumulator the accumulator
        pass laid out for Volta; ValueError naming the reason for any other call."""
        from tilelang.transform import utils as C
        from tilelang_cuda.mma_layout import VOLTA
        from tilelang_cuda.tileops.gemm import LAYOUT_ARGS

        args = list(ctx.args)
        instr = C.as_int(args[LAYOUT_ARGS + 4]) if len(args) >= LAYOUT_ARGS + 5 else None
        if instr not in VOLTA:
            raise ValueError("GemmMMASm70: this gemm is not served by mma.m8n8k4 (it needs float16 A and B, a "
                             "float16 or float32 fragment accumulator and K a multiple of 4, lowered for sm_70 / "
                             "sm_72)")
        return super().lower(ctx)
