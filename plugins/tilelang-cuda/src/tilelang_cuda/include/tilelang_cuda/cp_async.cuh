// tilelang_cuda/cp_async.cuh: cp.async global -> shared copies (sm_80+)
#ifndef TILELANG_CUDA_CP_ASYNC_CUH
#define TILELANG_CUDA_CP_ASYNC_CUH

#include "tilelang_cuda/common.cuh"

__device__ __forceinline__ void tl_cp_async_4(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void tl_cp_async_8(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void tl_cp_async_16(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void tl_cp_async_commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void tl_cp_async_mbarrier_arrive(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" :: "r"(tl_smem_addr(bar)) : "memory");
}

// ---- cp.async (sm_80+): 16-byte global -> shared copies; bytes < 16 zero-fills the rest
__device__ __forceinline__ void tl_cp_async16(void* smem, const void* gmem, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tl_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void tl_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // the landed bytes may next be read by wgmma through a descriptor (the async proxy): the writing thread
  // orders them before that proxy here, ahead of the barrier the readers wait on (the reader-side fence the
  // gemm issues after that barrier is kept as well)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
#define tl_cp_async_wait_group(n) tl_cp_async_wait<n>()

#endif  // TILELANG_CUDA_CP_ASYNC_CUH
