"""A tensor-core GEMM written with the mma.sync intrinsic emitter instead of ``T.gemm`` (sm_80+).

``C = A @ B^T`` with A ``[M, K]`` and B ``[N, K]`` in float16, accumulated in float32. Each block of 2 x 2 warps
computes a 128 x 128 tile: the K loop stages A and B tiles in shared memory (XOR-swizzled with
``make_mma_swizzle_layout`` so ``ldmatrix`` reads them without bank conflicts), and per 16-deep K step every warp
loads its fragments (``emitter.ldmatrix_a`` / ``ldmatrix_b``), issues its ``mma.sync.m16n8k16`` atoms
(``emitter.mma``); at the end ``emitter.stmatrix`` writes the accumulators to a shared tile that the block copies
out.

    python examples/cuda/mma_intrinsics_gemm.py        # prints the kernel (and checks it on a GPU)
"""

from __future__ import annotations

import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import make_mma_swizzle_layout
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter


def mma_intrinsics_gemm(M: int, N: int, K: int, dtype: str = "float16", out_dtype: str = "float16",
                        accum_dtype: str = "float32", block_row_warps: int = 2, block_col_warps: int = 2,
                        warp_row_tiles: int = 64, warp_col_tiles: int = 64, chunk: int = 32, stages: int = 2):
    """The prim_func of ``C[M, N] = A[M, K] @ B[N, K]^T`` (M, N, K multiples of the block tile)."""
    emitter = TensorCoreIntrinEmitter(a_dtype=dtype, b_dtype=dtype, accum_dtype=accum_dtype, a_transposed=False,
                                      b_transposed=True, block_row_warps=block_row_warps,
                                      block_col_warps=block_col_warps, warp_row_tiles=warp_row_tiles,
                                      warp_col_tiles=warp_col_tiles, chunk=chunk)
    block_M, block_N = block_row_warps * warp_row_tiles, block_col_warps * warp_col_tiles
    mx, my, mk = emitter.micro_size_x, emitter.micro_size_y, emitter.micro_size_k
    threads = 32 * block_row_warps * block_col_warps

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(N // block_N, M // block_M, threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, chunk), dtype)
            B_shared = T.alloc_shared((block_N, chunk), dtype)
            C_shared = T.alloc_shared((block_M // mx, block_N // my, mx, my), out_dtype)
            A_local = T.alloc_local((emitter.warp_rows * emitter.local_size_a,), dtype)
            B_local = T.alloc_local((emitter.warp_cols * emitter.local_size_b,), dtype)
            C_local = T.alloc_local((emitter.warp_rows * emitter.warp_cols * emitter.local_size_out,), accum_dtype)
            T.annotate_layout({A_shared: make_mma_swizzle_layout(A_shared),
                               B_shared: make_mma_swizzle_layout(B_shared)})
            for i in T.serial(emitter.warp_rows * emitter.warp_cols * emitter.local_size_out):
                C_local[i] = 0  # per-thread accumulators
            for ko in T.Pipelined(K // chunk, num_stages=stages):
                for i, k in T.Parallel(block_M, chunk):
                    A_shared[i, k] = A[by * block_M + i, ko * chunk + k]
                for j, k in T.Parallel(block_N, chunk):
                    B_shared[j, k] = B[bx * block_N + j, ko * chunk + k]
                for ki in T.serial(chunk // mk):
                    emitter.ldmatrix_a(A_local, A_shared, ki)
                    emitter.ldmatrix_b(B_local, B_shared, ki)
                    emitter.mma(A_local, B_local, C_local)
            emitter.stmatrix(C_local, C_shared)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_shared[i // mx, j // my, i % mx, j % my]

    return main


def main() -> None:
    import torch

    M = N = K = 1024
    kernel = tilelang.compile(mma_intrinsics_gemm(M, N, K), target={"kind": "cuda", "arch": "sm_80"})
    print(kernel.get_kernel_source())
    if torch.cuda.is_available():
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(N, K, dtype=torch.float16, device="cuda")
        c = torch.empty(M, N, dtype=torch.float16, device="cuda")
        kernel(a, b, c)
        torch.testing.assert_close(c, (a.float() @ b.float().T).half(), rtol=1e-2, atol=1e-2)
        print("matches torch")


if __name__ == "__main__":
    main()
