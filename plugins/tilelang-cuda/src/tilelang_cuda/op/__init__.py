"""The reference's GEMM implementation classes of the CUDA backend (``tilelang.cuda.op``), adapting this backend's
tile-op lowerings (`tilelang_cuda.tileops`)."""

from tilelang_cuda.op import gemm, gemm_sp

__all__ = ["gemm", "gemm_sp"]
