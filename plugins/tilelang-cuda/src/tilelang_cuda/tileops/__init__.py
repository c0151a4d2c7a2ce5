"""The CUDA backend's tile-operator implementations (priority > 0 beats core's generic ones) and the lowerings of
its language dialect's intrinsics (`tilelang_cuda.tileops.dialect`)."""

from tilelang_cuda.tileops.copy import COPY, TMA_COPY
from tilelang_cuda.tileops.debug import DEVICE_ASSERT
from tilelang_cuda.tileops.dialect import IMPLS as DIALECT_IMPLS
from tilelang_cuda.tileops.gemm import GEMM
from tilelang_cuda.tileops.gemm_blockscaled import GEMM_BLOCKSCALED
from tilelang_cuda.tileops.gemm_sp import GEMM_SP
from tilelang_cuda.tileops.reduce import REDUCE, REGISTER_REDUCE
from tilelang_cuda.tileops.tmem_copy import TMEM_COPY

IMPLS = (TMEM_COPY, TMA_COPY, COPY, GEMM, GEMM_SP, GEMM_BLOCKSCALED, REGISTER_REDUCE, REDUCE, DEVICE_ASSERT,
         *DIALECT_IMPLS)
