"""`WGSparseTensorCoreIntrinEmitter`: a hand-written-kernel emitter of 2:4 structured-sparse ``wgmma.sp`` (SS form,
operands through descriptors). Not offered by the tilelang-cuda backend: constructing it raises NotImplementedError
naming what is -- ``T.gemm_sp`` lowers to ``wgmma.mma_async.sp`` on sm_90a, and `SparseTensorCoreIntrinEmitter`
emits ``mma.sp`` (which sm_90a runs too) for hand-written kernels."""

from __future__ import annotations

from typing import Any

__all__ = ["WGSparseTensorCoreIntrinEmitter"]


class WGSparseTensorCoreIntrinEmitter:
    """Sparse ``wgmma.sp`` emitter: not offered by this backend."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("WGSparseTensorCoreIntrinEmitter (hand-written sparse wgmma) is not offered by the "
                                  "tilelang-cuda backend; use T.gemm_sp (it lowers to wgmma.mma_async.sp on sm_90a) "
                                  "or SparseTensorCoreIntrinEmitter (mma.sp, sm_80+)")
