"""The Metal backend's tile-op implementations (they beat core's generic ones where their `applies` holds)."""

from tilelang_metal.tileops.cooperative_tensor import IMPLS as COOPERATIVE_TENSOR
from tilelang_metal.tileops.gemm import GEMM
from tilelang_metal.tileops.gemm_mpp import GEMM_MPP
from tilelang_metal.tileops.reduce import REDUCE

IMPLS = (GEMM_MPP, GEMM, REDUCE, *COOPERATIVE_TENSOR)
