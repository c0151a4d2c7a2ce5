// tilelang_cuda/wgmma.cuh: wgmma descriptors, fences and commit groups (sm_90a)
#ifndef TILELANG_CUDA_WGMMA_CUH
#define TILELANG_CUDA_WGMMA_CUH

#include "tilelang_cuda/common.cuh"

#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// ---- wgmma (sm_90a): warpgroup-wide MMA; B comes from shared memory through a matrix descriptor
__device__ __forceinline__ unsigned long long tl_wgmma_desc(const void* smem, int lbo, int sbo) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  return d;  // base offset 0, no swizzle
}
// a swizzled descriptor (mode 1 = 128B, 2 = 64B, 3 = 32B); the tile starts on its swizzle repeat: base offset 0
__device__ __forceinline__ unsigned long long tl_wgmma_desc_sw(const void* smem, int lbo, int sbo, int mode) {
  return tl_wgmma_desc(smem, lbo, sbo) | ((unsigned long long)(mode & 3) << 62);
}
// make this thread's generic-proxy shared writes (st.shared, cp.async) visible to the async proxy (wgmma reads)
__device__ __forceinline__ void tl_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void tl_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// wait_group N: all but the newest N committed batches are complete (their shared reads, accumulator writes)
template <int N> __device__ __forceinline__ void tl_wgmma_wait_n() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
#define tl_wgmma_wait_group(n) tl_wgmma_wait_n<n>()
// the accumulator registers as outputs of an empty asm: no read of them is scheduled above the wait before it
__device__ __forceinline__ void tl_wgmma_fence_acc(void* acc, int regs) {
  float* c = reinterpret_cast<float*>(acc);
#pragma unroll
  for (int i = 0; i < regs; ++i) asm volatile("" : "+f"(c[i]) :: "memory");
}
#endif

// ---- wgmma batches of the dialect (T.warpgroup_arrive / commit_batch / wait) and user-chosen descriptors
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void tl_warpgroup_arrive() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_warpgroup_commit_batch() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void tl_warpgroup_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
#define tl_warpgroup_wait_n(n) tl_warpgroup_wait<n>()
#endif  // sm_90+

// each register of the accumulator as an operand of an empty asm: no use of it moves across the wgmma batch
template <typename T> __device__ __forceinline__ void tl_warpgroup_fence_operand(T* regs, int count) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
#pragma unroll
  for (int i = 0; i < count; ++i) asm volatile("" : "+r"(r[i]) :: "memory");
}
// a wgmma matrix descriptor of a tile whose (bank-swizzled) layout the kernel chose itself: start, LBO, SBO in
// bytes, swizzle mode (0 none, 1 128B, 2 64B, 3 32B); base offset 0 (the tile starts on a swizzle repeat)
__device__ __forceinline__ unsigned long long tl_wgmma_desc_user(const void* smem, int lbo, int sbo, int mode) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  d |= (unsigned long long)(mode & 3) << 62;
  return d;
}

#endif  // TILELANG_CUDA_WGMMA_CUH
