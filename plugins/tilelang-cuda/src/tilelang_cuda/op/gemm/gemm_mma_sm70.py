"""Volta (sm_70) ``mma.sync.m8n8k4`` GEMMs: the class names the path (its emitter's tiling) for the reference's
registry; tilelang-cuda does not lower it. ``T.gemm`` on sm_70 / sm_72 runs on CUDA cores (`GemmFMA`, core's
generic lowering), whose kernels hold no tensor-core instruction; tensor-core ``T.gemm`` starts at sm_80."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter, volta_refusal
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
        """A LoweringError naming the construct, the target's arch and the lowest arch with a tensor-core
        ``T.gemm`` here (a plain ``T.gemm`` on sm_70 takes the CUDA-core path without this class)."""
        from tilelang.transform import utils as C

        target = getattr(ctx, "target", None)
        arch = target.attrs.get("arch", "sm_70") if hasattr(target, "attrs") else (target or {}).get("arch", "sm_70")
        raise C.lowering_error(ctx.func, volta_refusal("T.gemm through GemmMMASm70", str(arch)))
