"""Small kernels shared by the tools' tests (defined in a file: the front end reads kernel source)."""

from __future__ import annotations

import tilelang
import tilelang.language as T


def add_one(n: int = 128):
    @T.prim_func
    def add_one(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=n):
            tid = T.get_thread_binding()
            B[tid] = A[tid] + 1.0

    return add_one


def tiled_gemm(M: int = 64, N: int = 64, K: int = 64, block: int = 32, stages: int = 0):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_s = T.alloc_shared((block, block), "float16")
            B_s = T.alloc_shared((block, block), "float16")
            C_f = T.alloc_fragment((block, block), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block), num_stages=stages):
                T.copy(A[by * block, k * block], A_s)
                T.copy(B[k * block, bx * block], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * block, bx * block])

    return gemm


@tilelang.jit
def eager_gemm(A, B):
    M = N = K = 64
    block = 32
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_s = T.alloc_shared((block, block), T.float16)
        B_s = T.alloc_shared((block, block), T.float16)
        C_f = T.alloc_fragment((block, block), T.float32)
        T.clear(C_f)
        for k in T.serial(T.ceildiv(K, block)):
            T.copy(A[by * block, k * block], A_s)
            T.copy(B[bx * block, k * block], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
        T.copy(C_f, C[by * block, bx * block])
    return C


def local_indexed_by_parallel():
    @T.prim_func
    def bad_local(out: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            acc = T.alloc_local((32,), "float32")
            for i in T.Parallel(32):
                acc[i] = T.float32(1)
            for i in T.serial(32):
                out[i] = acc[i]

    return bad_local


def copy_inside_parallel():
    @T.prim_func
    def bad_nest(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((64, 64), "float32")
            for i in T.Parallel(64):
                B[i, 0] = A[i, 0]
                for j in T.Parallel(64):
                    S[i, j] = A[i, j]
            T.copy(S, B)

    return bad_nest


def symbolic_parallel_on_fragment():
    n = T.dynamic("n")

    @T.prim_func
    def bad_fragment(A: T.Tensor((128, n), "float32")):
        with T.Kernel(128, threads=128) as bx:
            frag = T.alloc_fragment((128,), "float32")
            for i in T.Parallel(n):
                frag[i] = A[bx, i]
            for i in T.Parallel(128):
                A[bx, i] = frag[i]

    return bad_fragment
