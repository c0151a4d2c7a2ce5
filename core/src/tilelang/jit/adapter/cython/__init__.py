"""The reference's ``cython`` execution adapter, mapped onto the TVM runtime (see `tilelang.jit.adapter`)."""

from tilelang.jit.adapter.cython.adapter import CythonKernelAdapter

__all__ = ["CythonKernelAdapter"]
