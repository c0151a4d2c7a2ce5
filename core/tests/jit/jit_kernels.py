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


@tilelang.jit(target="cpu")
def eager_dyn_axpy(X, Y, alpha: T.float32, block: int = 4):
    """An eager kernel with a dynamic dim (rows) and a runtime scalar: Z = alpha * X + Y, one kernel for every
    row count and alpha."""
    m = T.dynamic("m")
    N = T.const("N")
    X: T.Tensor((m, N), T.float32)
    Y: T.Tensor((m, N), T.float32)
    Z = T.empty((m, N), T.float32)
    with T.Kernel(T.ceildiv(m, block), is_cpu=True) as bx:
        for i, j in T.Parallel(block, N):
            if bx * block + i < m:
                Z[bx * block + i, j] = X[bx * block + i, j] * alpha + Y[bx * block + i, j]
    return Z


@tilelang.autotune(configs=[{"block_M": 4}, {"block_M": 16}], warmup=1, rep=3, ref_prog=lambda A, B: A * 2.0 + B,
                   progress=False)
@tilelang.jit(target="cpu")
def tuned_eager_scale_add(A, B, block_M: int = 8):
    """An autotuned eager elementwise kernel: C = 2 A + B."""
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float32)
    B: T.Tensor((M, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
        for i, j in T.Parallel(block_M, N):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] * 2.0 + B[bx * block_M + i, j]
    return C


@tilelang.autotune(configs=[{"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 32}], warmup=1, rep=3,
                   ref_prog=lambda A, B: A @ B, progress=False)
@tilelang.jit(target="cpu")
def tuned_eager_gemm(A, B, block_M: int = 32, block_N: int = 32, block_K: int = 16):
    """An autotuned eager GEMM: C = A @ B (float32)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float32)
    B: T.Tensor((K, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), is_cpu=True) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float32)
        B_shared = T.alloc_shared((block_K, block_N), T.float32)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
            T.copy(A[by * block_M, k * block_K], A_shared)
            T.copy(B[k * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C
