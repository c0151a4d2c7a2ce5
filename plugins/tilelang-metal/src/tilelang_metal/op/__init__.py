"""Metal tile-operator classes (``tilelang.metal.op``), by operator."""

from tilelang_metal.op import gemm

__all__ = ["gemm"]
