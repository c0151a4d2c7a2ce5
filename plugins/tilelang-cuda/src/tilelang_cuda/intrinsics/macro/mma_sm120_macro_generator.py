"""`TensorCoreIntrinEmitterSM120`: consumer Blackwell (sm_120) ``mma.sync`` with the block-scaled
(``kind::mxf4nvf4``) variants of the reference. The dense shapes emit like `TensorCoreIntrinEmitter`; the
block-scaled form (``is_blockscaled=True``) and its tile contract `SM120BlockScaleTile` are not offered by this
backend and raise NotImplementedError naming what to use instead.
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter

__all__ = ["SM120BlockScaleTile", "TensorCoreIntrinEmitterSM120"]


class TensorCoreIntrinEmitterSM120(TensorCoreIntrinEmitter):
    """sm_120 ``mma.sync``; block-scaled MMA (`is_blockscaled`) is not emitted by this backend."""

    def __init__(self, *args: Any, is_blockscaled: bool = False, kind: str | None = None,
                 scale_vec_size: int | None = None, stype: str | None = None, **kwargs: Any):
        if is_blockscaled:
            raise NotImplementedError("block-scaled sm_120 MMA (kind::mxf4nvf4 / mxf8f6f4) is not emitted by the "
                                      "tilelang-cuda backend; dequantize the operands and use "
                                      "TensorCoreIntrinEmitter or T.gemm")
        super().__init__(*args, **kwargs)
        self.is_blockscaled = False


class SM120BlockScaleTile:
    """The reference's sm_120 block-scaled tile contract: not offered by this backend."""

    @classmethod
    def from_emitter(cls, emitter: Any, **kwargs: Any) -> SM120BlockScaleTile:
        raise NotImplementedError("SM120BlockScaleTile (block-scaled sm_120 GEMM tiles) is not offered by the "
                                  "tilelang-cuda backend")
