"""Hand-written matrix-core kernels for the ROCm dialect tests: an MFMA GEMM through `MatrixCoreIntrinEmitter`
(swizzled LDS operands, register fragments, ``T.tvm_mfma``), a WMMA GEMM through `WMMAIntrinEmitter`, and gfx950's
LDS transpose reads."""

from __future__ import annotations

import tilelang.language as T
from tilelang_rocm.intrinsics import MatrixCoreIntrinEmitter, WMMAIntrinEmitter, make_mfma_swizzle_layout


def tl_matmul(M, N, K, in_dtype, out_dtype, accum_dtype, a_transposed=False, b_transposed=True, k_pack=1,
              target=None):
    block_row_warps = block_col_warps = 2
    warp_row_tiles = warp_col_tiles = 32
    chunk = 32 * k_pack
    block_M, block_N, block_K = block_row_warps * warp_row_tiles, block_col_warps * warp_col_tiles, chunk
    A_shape = (K, M) if a_transposed else (M, K)
    B_shape = (N, K) if b_transposed else (K, N)
    A_shared_shape = (block_K, block_M) if a_transposed else (block_M, block_K)
    B_shared_shape = (block_N, block_K) if b_transposed else (block_K, block_N)
    emitter = MatrixCoreIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype=accum_dtype,
                                      a_transposed=a_transposed, b_transposed=b_transposed,
                                      block_row_warps=block_row_warps, block_col_warps=block_col_warps,
                                      warp_row_tiles=warp_row_tiles, warp_col_tiles=warp_col_tiles, chunk=chunk,
                                      k_pack=k_pack, target=target)
    threads = 64 * block_row_warps * block_col_warps
    warp_rows, warp_cols = emitter.warp_rows, emitter.warp_cols
    la = emitter.local_size_a * emitter.k_pack
    lb = emitter.local_size_b * emitter.k_pack
    lc = emitter.local_size_out
    step = emitter.k_pack * emitter.micro_size_k

    @T.prim_func
    def main(A: T.Tensor(A_shape, in_dtype), B: T.Tensor(B_shape, in_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_shared_shape, in_dtype, scope="shared")
            B_shared = T.alloc_shared(B_shared_shape, in_dtype, scope="shared")
            C_shared = T.alloc_shared((block_M, block_N), out_dtype, scope="shared")
            A_local = T.alloc_local((warp_rows * la,), in_dtype)
            B_local = T.alloc_local((warp_cols * lb,), in_dtype)
            C_local = T.alloc_local((warp_rows * warp_cols * lc,), accum_dtype)
            T.annotate_layout({A_shared: make_mfma_swizzle_layout(A_shared),
                               B_shared: make_mfma_swizzle_layout(B_shared)})
            for i in T.serial(warp_rows * warp_cols * lc):
                C_local[i] = 0
            for ko in T.serial(K // block_K):
                if a_transposed:
                    T.copy(A[ko * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                if b_transposed:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                for ki in T.serial(block_K // step):
                    emitter.ldmatrix_a(A_local, A_shared, ki)
                    emitter.ldmatrix_b(B_local, B_shared, ki)
                    emitter.mfma(A_local, B_local, C_local)
            emitter.stmatrix(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])
    return main


def wmma_matmul(M, N, K, in_dtype="float16", target=None, b_transposed=True):
    chunk = 32
    block_M, block_N, block_K = 64, 64, chunk
    emitter = WMMAIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype="float32", b_transposed=b_transposed,
                                block_row_warps=2, block_col_warps=2, warp_row_tiles=32, warp_col_tiles=32,
                                chunk=chunk, target=target)
    la, lb, lc = emitter.local_size_a, emitter.local_size_b, emitter.local_size_out
    B_shape = (N, K) if b_transposed else (K, N)
    B_shared_shape = (block_N, block_K) if b_transposed else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), in_dtype), B: T.Tensor(B_shape, in_dtype), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // block_N, M // block_M, threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype, scope="shared")
            B_shared = T.alloc_shared(B_shared_shape, in_dtype, scope="shared")
            C_shared = T.alloc_shared((block_M, block_N), "float32", scope="shared")
            A_local = T.alloc_local((emitter.warp_rows * la,), in_dtype)
            B_local = T.alloc_local((emitter.warp_cols * lb,), in_dtype)
            C_local = T.alloc_local((emitter.warp_rows * emitter.warp_cols * lc,), "float32")
            for i in T.serial(emitter.warp_rows * emitter.warp_cols * lc):
                C_local[i] = 0
            for ko in T.serial(K // block_K):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                if b_transposed:
                    T.copy(B[bx * block_N, ko * block_K], B_shared)
                else:
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                for ki in T.serial(block_K // 16):
                    emitter.ldmatrix_a(A_local, A_shared, ki)
                    emitter.ldmatrix_b(B_local, B_shared, ki)
                    emitter.wmma(A_local, B_local, C_local)
            emitter.stmatrix(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])
    return main


def ds_read(bits):
    dt = "float16" if bits == 16 else "float32"

    @T.prim_func
    def k(X: T.Tensor((128,), dt), Out: T.Tensor((32, 2), "float32")):
        with T.Kernel(1, threads=32):
            smem = T.alloc_shared((128,), dt, scope="shared")
            smem2 = T.alloc_shared((32, 2), "float32", scope="shared")
            T.copy(X, smem)
            T.sync_threads()
            tx = T.get_thread_binding()
            raw = T.ds_read_tr16_b64(smem[tx * 4]) if bits == 16 else T.ds_read_tr8_b64(smem[tx * 2])
            val = T.reinterpret("float32x2", raw)

            smem2[tx, 0:2] = val
            T.sync_threads()
            T.copy(smem2, Out)
    return k
