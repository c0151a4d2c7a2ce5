"""`SparseTensorCoreIntrinEmitter`: 2:4 structured-sparse ``mma.sp``. The tilelang-cuda backend does not lower
sparse tensor-core GEMMs; constructing the emitter raises NotImplementedError naming the dense alternative."""

from __future__ import annotations

from typing import Any

__all__ = ["SparseTensorCoreIntrinEmitter"]


class SparseTensorCoreIntrinEmitter:
    """Sparse ``mma.sp`` emitter: not offered by this backend."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("2:4 sparse mma.sp (SparseTensorCoreIntrinEmitter) is not emitted by the "
                                  "tilelang-cuda backend; decompress the operand and use TensorCoreIntrinEmitter")
