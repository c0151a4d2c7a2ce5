"""The reference's ``torch`` execution adapter (Metal kernels launched through torch's MPS backend)."""

from tilelang.jit.adapter.torch.metal import MetalKernelAdapter

__all__ = ["MetalKernelAdapter"]
