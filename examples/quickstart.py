"""The TileLang quickstart: a tiled GEMM, compiled for the default target and checked against torch.

Written as in the reference TileLang README (alloc_shared + alloc_fragment + T.Pipelined + T.gemm); with only
tilelang-cpu installed, the default target is this machine's CPU.
"""

import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, block_M: int = 64, block_N: int = 64, block_K: int = 32, dtype=T.float32, accum_dtype=T.float32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def main() -> None:
    a = torch.randn(512, 384)
    b = torch.randn(384, 256)
    c = matmul(a, b)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    print(f"target: {tilelang.determine_target()}")
    print(f"C = A @ B for {tuple(a.shape)} x {tuple(b.shape)} matches torch.matmul "
          f"(max abs error {(c - a @ b).abs().max().item():.2e})")


if __name__ == "__main__":
    main()
