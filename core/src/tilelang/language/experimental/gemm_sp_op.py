"""The reference's ``tilelang.language.experimental.gemm_sp_op``: 2:4-sparse GEMM."""

from tilelang.language.tileops import gemm_sp

__all__ = ["gemm_sp"]
