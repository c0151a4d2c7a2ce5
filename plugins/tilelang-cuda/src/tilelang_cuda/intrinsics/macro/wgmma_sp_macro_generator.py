"""`WGSparseTensorCoreIntrinEmitter`: 2:4 structured-sparse ``wgmma.sp``. Not lowered by the tilelang-cuda
backend; constructing the emitter raises NotImplementedError naming the dense alternative."""

from __future__ import annotations

from typing import Any

__all__ = ["WGSparseTensorCoreIntrinEmitter"]


class WGSparseTensorCoreIntrinEmitter:
    """Sparse ``wgmma.sp`` emitter: not offered by this backend."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("2:4 sparse wgmma.sp (WGSparseTensorCoreIntrinEmitter) is not emitted by the "
                                  "tilelang-cuda backend; decompress the operand and use T.wgmma_gemm")
