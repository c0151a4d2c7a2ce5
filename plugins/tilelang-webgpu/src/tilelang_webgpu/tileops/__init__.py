"""The WebGPU backend's tile-op implementations, one module per operator (they beat core's generic ones where
their `applies` holds): the register-blocked GEMM, vec4 tile copies and tree / subgroup row reductions."""

from tilelang_webgpu.tileops.copy import COPY
from tilelang_webgpu.tileops.gemm import GEMM
from tilelang_webgpu.tileops.reduce import REDUCE

IMPLS = (GEMM, COPY, REDUCE)
