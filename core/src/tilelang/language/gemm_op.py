"""The reference's ``tilelang.language.gemm_op``: ``gemm`` and its warp policies."""

from tilelang.ir.ops import GemmWarpPolicy
from tilelang.language.tileops import gemm

__all__ = ["GemmWarpPolicy", "gemm"]
