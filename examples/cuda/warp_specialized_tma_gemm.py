"""A warp-specialised Hopper GEMM (sm_90a): one producer warpgroup streams A and B tiles with TMA into a ring of
shared-memory stages, one consumer warpgroup multiplies them with wgmma, and mbarriers hand the stages over.

``C = A @ B^T`` with A ``[M, K]`` and B ``[N, K]`` (both K-major, the layout wgmma reads without transposes).
Per stage ``s`` two barriers: ``full[s]`` completes when the producer's 128 threads have arrived and both TMA
boxes have landed (``T.tma_copy`` adds their bytes); ``empty[s]`` when the consumer's 128 threads are done with
it. The tiles are stored in the 128-byte bank swizzle TMA writes and wgmma reads (``T.annotate_layout``); the
consumer uses the wgmma intrinsic emitter of ``tilelang.cuda.intrinsics``. The producer gives registers back
(``setmaxnreg.dec``), the consumer takes them (``setmaxnreg.inc``).

    python examples/cuda/warp_specialized_tma_gemm.py          # prints the kernel (and runs it on an H100/H200)
"""

from __future__ import annotations

import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.wgmma_macro_generator import TensorCoreIntrinEmitter
from tilelang.layout import make_full_bank_swizzled_layout


def ws_tma_gemm(M: int, N: int, K: int, block_M: int = 128, block_N: int = 128, block_K: int = 64,
                num_stages: int = 2, dtype: str = "float16", accum_dtype: str = "float32"):
    """The prim_func of ``C[M, N] = A[M, K] @ B[N, K]^T`` (M, N, K multiples of the block sizes)."""
    emitter = TensorCoreIntrinEmitter(a_dtype=dtype, b_dtype=dtype, accum_dtype=accum_dtype, a_transposed=False,
                                      b_transposed=True, block_row_warps=4, block_col_warps=1,
                                      warp_row_tiles=block_M // 4, warp_col_tiles=block_N, chunk=block_K)
    k_tiles = K // block_K

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(N // block_N, M // block_M, threads=256) as (bx, by):
            A_shared = T.alloc_shared((num_stages, block_M, block_K), dtype)
            B_shared = T.alloc_shared((num_stages, block_N, block_K), dtype)
            C_local = T.alloc_local((emitter.accum_regs,), accum_dtype)
            full = T.alloc_barrier([128] * num_stages)
            empty = T.alloc_barrier([128] * num_stages)
            T.annotate_layout({A_shared: make_full_bank_swizzled_layout(A_shared),
                               B_shared: make_full_bank_swizzled_layout(B_shared)})
            emitter._assign_a_shared_layout(make_full_bank_swizzled_layout(A_shared))
            emitter._assign_b_shared_layout(make_full_bank_swizzled_layout(B_shared))
            T.annotate_producer_reg_dealloc(40)
            T.annotate_consumer_reg_alloc(232)
            for ko in T.serial(k_tiles):
                with T.ws(1):  # producer: wait for a free stage, issue both loads, arrive
                    T.mbarrier_wait_parity(empty[ko % num_stages], ((ko // num_stages) % 2) ^ 1)
                    T.tma_copy(A[by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K],
                               A_shared[ko % num_stages, :, :], barrier=full[ko % num_stages])
                    T.tma_copy(B[bx * block_N:(bx + 1) * block_N, ko * block_K:(ko + 1) * block_K],
                               B_shared[ko % num_stages, :, :], barrier=full[ko % num_stages])
                    T.mbarrier_arrive(full[ko % num_stages])
                with T.ws(0):  # consumer: wait for the stage, multiply, release it
                    T.mbarrier_wait_parity(full[ko % num_stages], (ko // num_stages) % 2)
                    emitter.wgmma(A_shared[ko % num_stages, :, :], B_shared[ko % num_stages, :, :], C_local,
                                  clear_accum=ko == 0)
                    T.mbarrier_arrive(empty[ko % num_stages])
            with T.ws(0):
                emitter.stmatrix(C_local, C, pid_m=by, pid_n=bx)

    return main


def main() -> None:
    import torch

    M = N = K = 1024
    kernel = tilelang.compile(ws_tma_gemm(M, N, K), target={"kind": "cuda", "arch": "sm_90a"})
    print(kernel.get_kernel_source())
    if torch.cuda.is_available() and torch.cuda.get_device_capability() >= (9, 0):
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(N, K, dtype=torch.float16, device="cuda")
        c = torch.empty(M, N, dtype=torch.float16, device="cuda")
        kernel(a, b, c)
        torch.testing.assert_close(c, (a.float() @ b.float().T).half(), rtol=1e-2, atol=1e-2)
        print("matches torch")


if __name__ == "__main__":
    main()
