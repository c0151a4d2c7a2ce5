"""The CUDA backend's tile-operator implementations (priority > 0 beats core's generic ones)."""

from tilelang_cuda.tileops.copy import COPY, TMA_COPY
from tilelang_cuda.tileops.gemm import GEMM
from tilelang_cuda.tileops.reduce import REDUCE

IMPLS = (TMA_COPY, COPY, GEMM, REDUCE)
