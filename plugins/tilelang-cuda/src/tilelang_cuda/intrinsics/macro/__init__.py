"""Intrinsic emitters of hand-written tensor-core kernels: mma.sync (`mma_macro_generator`, sm_75 / sm_70 / sm_120
variants), wgmma (`wgmma_macro_generator`) and tcgen05 (`tcgen05_macro_generator`)."""

from tilelang_cuda.intrinsics.macro.mma_macro_generator import (
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
)
from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import TensorCoreIntrinEmitterSM120

__all__ = ["TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterSM120", "TensorCoreIntrinEmitterWithLadderTransform"]
