"""The ROCm backend's tile-op implementations (they beat core's generic ones where their `applies` holds)."""

from tilelang_rocm.tileops import dialect
from tilelang_rocm.tileops.atomic import ATOMIC, ELEMENT_ATOMICS
from tilelang_rocm.tileops.gemm import GEMM

IMPLS = (GEMM, ATOMIC, *ELEMENT_ATOMICS, *dialect.IMPLS)
