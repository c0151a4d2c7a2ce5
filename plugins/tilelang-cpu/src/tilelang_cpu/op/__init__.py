"""CPU tile-operator classes (``tilelang.cpu.op``), by operator."""

from tilelang_cpu.op import gemm

__all__ = ["gemm"]
