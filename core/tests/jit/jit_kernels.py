"""DSL kernels for the JIT tests (lazy factories and an eager kernel), importable by worker processes."""

from __future__ import annotations

import tilelang
import tilelang.language as T


def add_factory(M, N, block_M=8, dtype="float32"):
    """A lazy kernel factory: C = A + B (M must be a multiple of block_M: no bounds checks)."""

    @T.prim_func
    def add(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]

    return add


add = tilelang.jit(out_idx=[-1], target="cpu")(add_factory)


@tilelang.jit(target="cpu")
def eager_scale_add(A, B, alpha: float = 2.0, block_M: int = 16):
    """An eager kernel: C = alpha * A + B, specialised per shape."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor((M, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
        for i, j in T.Parallel(block_M, N):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] * alpha + B[bx * block_M + i, j]
    return C


@tilelang.autotune(configs=[{"block_M": 8}, {"block_M": 16}, {"block_M": 64}], warmup=1, rep=5,
                   ref_prog=lambda A, B: A + B, progress=False)
@tilelang.jit(out_idx=[-1], target="cpu")
def tuned_add(M, N, block_M=32):
    return add_factory(M, N, block_M)
