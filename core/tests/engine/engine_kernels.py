"""Tile kernels (written with ``tilelang.language``) used by the engine tests, each with its torch reference."""

from __future__ import annotations

import tilelang.language as T


def elementwise_add(M=256, N=256, bm=32, bn=32, dtype="float32"):
    @T.prim_func
    def add(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + B[by * bm + i, bx * bn + j]

    return add


def copy_fill(M=128, N=128, bm=64, bn=64):
    @T.prim_func
    def copy_fill(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            S = T.alloc_shared((bm, bn), "float32")
            F = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], S)
            T.copy(S, B[by * bm, bx * bn])
            T.fill(F, 3.0)
            T.copy(F, C[by * bm, bx * bn])

    return copy_fill


def gemm(M=128, N=128, K=128, bm=64, bn=64, bk=32, dtype="float32", accum="float32", trans_a=False, trans_b=False,
         stages=2, threads=128):
    a_shape = (K, M) if trans_a else (M, K)
    b_shape = (N, K) if trans_b else (K, N)
    as_shape = (bk, bm) if trans_a else (bm, bk)
    bs_shape = (bn, bk) if trans_b else (bk, bn)

    @T.prim_func
    def gemm(A: T.Tensor(a_shape, dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), accum)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(as_shape, dtype)
            B_shared = T.alloc_shared(bs_shape, dtype)
            C_local = T.alloc_fragment((bm, bn), accum)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                if trans_a:
                    T.copy(A[k * bk, by * bm], A_shared)
                else:
                    T.copy(A[by * bm, k * bk], A_shared)
                if trans_b:
                    T.copy(B[bx * bn, k * bk], B_shared)
                else:
                    T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_a, transpose_B=trans_b)
            T.copy(C_local, C[by * bm, bx * bn])

    return gemm


def gemm_dynamic(N=128, K=128, bm=64, bn=64, bk=32):
    M = T.dynamic("m")

    @T.prim_func
    def gemm_dyn(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float32")
            B_shared = T.alloc_shared((bk, bn), "float32")
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])

    return gemm_dyn


def reduce_rows(M=128, N=64, bm=32, kind="sum"):
    @T.prim_func
    def reduce_rows(A: T.Tensor((M, N), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_local = T.alloc_fragment((bm, N), "float32")
            R = T.alloc_fragment((bm,), "float32")
            T.copy(A[bx * bm, 0], A_local)
            T.reduce(A_local, R, kind, dim=1)
            T.copy(R, B[bx * bm])

    return reduce_rows


def softmax(M=128, N=256, bm=16):
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def softmax(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            x = T.alloc_fragment((bm, N), "float32")
            mx = T.alloc_fragment((bm,), "float32")
            sm = T.alloc_fragment((bm,), "float32")
            T.copy(X[bx * bm, 0], x)
            T.reduce_max(x, mx, dim=1)
            for i, j in T.Parallel(bm, N):
                x[i, j] = T.exp2((x[i, j] - mx[i]) * scale)
            T.reduce_sum(x, sm, dim=1)
            for i, j in T.Parallel(bm, N):
                x[i, j] = x[i, j] / sm[i]
            T.copy(x, Y[bx * bm, 0])

    return softmax


def cumsum(M=64, N=128, bm=16, reverse=False):
    @T.prim_func
    def cumsum(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            S = T.alloc_shared((bm, N), "float32")
            T.copy(A[bx * bm, 0], S)
            T.cumsum(S, dim=1, reverse=reverse)
            T.copy(S, B[bx * bm, 0])

    return cumsum


def atomic_sum(M=256, N=64, bm=32):
    @T.prim_func
    def atomic_sum(A: T.Tensor((M, N), "float32"), Out: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            F = T.alloc_fragment((bm, N), "float32")
            R = T.alloc_fragment((N,), "float32")
            T.copy(A[bx * bm, 0], F)
            T.reduce_sum(F, R, dim=0)
            T.atomic_add(Out[0:N], R)

    return atomic_sum


def flash_attention(batch=1, heads=2, seq_len=128, dim=32, block_M=32, block_N=32, causal=True, dtype="float16"):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = (batch, seq_len, heads, dim)
    accum = "float32"

    @T.prim_func
    def flash_attn(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
                   Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum)
            acc_s_cast = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum)
            scores_max = T.alloc_fragment((block_M,), accum)
            scores_max_prev = T.alloc_fragment((block_M,), accum)
            scores_scale = T.alloc_fragment((block_M,), accum)
            scores_sum = T.alloc_fragment((block_M,), accum)
            logsum = T.alloc_fragment((block_M,), accum)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum))
            loop_range = T.ceildiv((bx + 1) * block_M, block_N) if causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(loop_range, num_stages=1):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum))
                else:
                    T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.copy(scores_max, scores_max_prev)
                T.fill(scores_max, -T.infinity(accum))
                T.reduce_max(acc_s, scores_max, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
                T.copy(acc_s, acc_s_cast)
                T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
                T.reduce_sum(acc_s, scores_sum, dim=1)
                for i in T.Parallel(block_M):
                    logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return flash_attn
