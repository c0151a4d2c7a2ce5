"""The reference's GEMM implementation classes of the ROCm backend (``tilelang.rocm.op``), adapting this backend's
``T.gemm`` lowering (`tilelang_rocm.tileops.gemm`)."""

from tilelang_rocm.op import gemm

__all__ = ["gemm"]
