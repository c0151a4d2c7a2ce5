// tilelang_cuda/barrier.cuh: mbarriers (sm_80+; transaction counts and cluster arrivals sm_90+) and named barriers
#ifndef TILELANG_CUDA_BARRIER_CUH
#define TILELANG_CUDA_BARRIER_CUH

#include "tilelang_cuda/common.cuh"

__device__ __forceinline__ void tl_mbarrier_init(void* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(tl_smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void tl_fence_barrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void tl_mbarrier_arrive(void* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
#else
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n" :: "r"(tl_smem_addr(bar))
               : "memory");
#endif
}
__device__ __forceinline__ void tl_mbarrier_wait_parity(void* bar, int parity) {
  unsigned addr = tl_smem_addr(bar), done = 0;
  while (!done) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#else
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(addr), "r"(parity) : "memory");
#endif
  }
}
__device__ __forceinline__ void tl_cp_async_mbarrier_arrive_noinc(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void tl_named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void tl_mbarrier_expect_tx(void* bar, int bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tl_mbarrier_arrive_expect_tx(void* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tl_mbarrier_arrive_cluster(void* bar, int cta) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" :: "r"(remote) : "memory");
}
__device__ __forceinline__ void tl_mbarrier_arrive_expect_tx_cluster(void* bar, int cta, int bytes) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;\n"
               :: "r"(remote), "r"(bytes) : "memory");
}
// CTA `cta`'s copy of `dst` gets `bytes` bytes of this CTA's `src`; they complete on that CTA's copy of `bar`
__device__ __forceinline__ void tl_bulk_copy_to_cluster(void* dst, const void* src, int bytes, void* bar, int cta) {
  unsigned rdst, rbar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(rdst) : "r"(tl_smem_addr(dst)), "r"(cta));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(rbar) : "r"(tl_smem_addr(bar)), "r"(cta));
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               :: "r"(rdst), "r"(tl_smem_addr(src)), "r"(bytes), "r"(rbar) : "memory");
}
// one element stored into CTA `cta`'s copy of the shared location `dst` (distributed shared memory)
template <typename T> __device__ __forceinline__ void tl_st_cluster(T* dst, T value, int cta) {
  unsigned long long remote;
  asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(remote)
               : "l"(reinterpret_cast<unsigned long long>(dst)), "r"(cta));
  *reinterpret_cast<T*>(remote) = value;
}
#endif  // sm_90+

#endif  // TILELANG_CUDA_BARRIER_CUH
