"""Metal intrinsic emitters for hand-written kernels (``tilelang.metal.intrinsics``)."""

from tilelang_metal.intrinsics.metal_macro_generator import MPSIntrinEmitter

__all__ = ["MPSIntrinEmitter"]
