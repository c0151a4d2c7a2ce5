// tilelang_cuda/common.cuh: the shared-memory address every helper takes its operands by
#ifndef TILELANG_CUDA_COMMON_CUH
#define TILELANG_CUDA_COMMON_CUH

__device__ __forceinline__ unsigned tl_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// `v` as computed here, kept in a register: the compiler may not recompute it where it is used (a loop-invariant
// value a loop would otherwise rematerialise every iteration, e.g. a rasterised block index in a TMA producer).
__device__ __forceinline__ int tl_keep_int(int v) {
  int r;
  asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(v));
  return r;
}

#endif  // TILELANG_CUDA_COMMON_CUH
