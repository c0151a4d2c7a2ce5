"""Metal-specific passes (``tilelang.metal.transform``)."""

from tilelang_metal.transform.mark_host_metal_context import MarkHostMetalContext
from tilelang_metal.transform.metal_fragment_to_simdgroup import MetalFragmentToSimdgroup

__all__ = ["MarkHostMetalContext", "MetalFragmentToSimdgroup"]
