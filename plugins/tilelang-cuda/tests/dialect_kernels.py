"""Kernels shared by the dialect tests: a warp-specialised Blackwell GEMM (TMA loads, ``T.tcgen05_gemm`` into a
TMEM accumulator, ``tcgen05.commit`` to an mbarrier, the TMEM tile read back with ``T.copy``).

Warp 0 loads a stage with TMA, warp 1 issues the MMAs of the stage and commits them to the stage's `consumed`
barrier, so the producer can refill it; after the last stage warp 1 commits to `tmem_full` and every warp copies
its 32 TMEM lanes out.  The roles sit inside the K loop (not loops inside the roles), which the lock-step
emulator can run."""

from __future__ import annotations

import tilelang.language as T


def tcgen05_gemm(M: int, N: int, K: int, block_M: int = 128, block_N: int = 128, block_K: int = 64,
                 num_stages: int = 2, dtype: str = "float16"):
    k_iters = K // block_K

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(M // block_M, N // block_N, threads=128) as (bx, by):
            A_shared = T.alloc_shared((num_stages, block_M, block_K), dtype)
            B_shared = T.alloc_shared((num_stages, block_K, block_N), dtype)
            C_tmem = T.alloc_tmem([block_M, block_N], "float32")
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_barrier([32] * num_stages)
            consumed = T.alloc_barrier([1] * num_stages)
            tmem_full = T.alloc_barrier([1])
            tx = T.get_thread_binding()
            for k in T.serial(k_iters):
                if tx < 32:
                    T.mbarrier_wait_parity(consumed[k % num_stages], ((k // num_stages) & 1) ^ 1)
                    T.tma_copy(A[bx * block_M:(bx + 1) * block_M, k * block_K:(k + 1) * block_K],
                               A_shared[k % num_stages, :, :], barrier=loaded[k % num_stages])
                    T.tma_copy(B[k * block_K:(k + 1) * block_K, by * block_N:(by + 1) * block_N],
                               B_shared[k % num_stages, :, :], barrier=loaded[k % num_stages])
                    T.mbarrier_arrive(loaded[k % num_stages])
                elif tx < 64:
                    T.mbarrier_wait_parity(loaded[k % num_stages], (k // num_stages) & 1)
                    T.tcgen05_gemm(A_shared[k % num_stages, :, :], B_shared[k % num_stages, :, :], C_tmem,
                                   mbar=consumed[k % num_stages], clear_accum=k == 0)
            if 32 <= tx < 64:
                T.tcgen05_mma_arrive(tmem_full)
            T.mbarrier_wait_parity(tmem_full, 0)
            T.copy(C_tmem, C_local)
            T.copy(C_local, C[bx * block_M, by * block_N])
    return main
