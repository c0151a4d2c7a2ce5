// tilelang_cuda/tma_copy.cuh: the TMA path of tl.copy (sm_90+): 2-D box loads completing on one of the kernel's
// 16 mbarrier slots (`tilelang_cuda.tma.SLOTS`), each thread following the slots' phases in `tl_tma_phase`
#ifndef TILELANG_CUDA_TMA_COPY_CUH
#define TILELANG_CUDA_TMA_COPY_CUH

#include "tilelang_cuda/common.cuh"
#include "tilelang_cuda/tensor_map.cuh"

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__shared__ __align__(8) unsigned long long tl_tma_bar[16];

__device__ __forceinline__ void tl_tma_init() {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    for (int i = 0; i < 16; ++i)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" :: "r"(tl_smem_addr(&tl_tma_bar[i])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
}
// one thread: expect `bytes` on the slot's barrier, then the tiled bulk copy that completes them
// (box_rows, box_cols: the box the host encoded into `map`, kept in the call for the artifact metadata)
__device__ __forceinline__ void tl_tma_load_2d(const tl_tensor_map_t& map, int box_rows, int box_cols, void* dst,
                                               int slot, int bytes, int col, int row) {
  unsigned bar = tl_smem_addr(&tl_tma_bar[slot]);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
               "[%4];\n" :: "r"(tl_smem_addr(dst)), "l"(reinterpret_cast<unsigned long long>(&map)), "r"(col),
               "r"(row), "r"(bar) : "memory");
}
__device__ __forceinline__ void tl_tma_wait_parity(int slot, unsigned& phase) {
  unsigned bar = tl_smem_addr(&tl_tma_bar[slot]);
  unsigned parity = (phase >> slot) & 1u, done = 0;
  while (!done) {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
  phase ^= 1u << slot;
}
#define tl_tma_wait(slot) tl_tma_wait_parity((slot), tl_tma_phase)
#endif  // sm_90+

#endif  // TILELANG_CUDA_TMA_COPY_CUH
