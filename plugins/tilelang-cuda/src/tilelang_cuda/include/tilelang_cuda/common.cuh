// tilelang_cuda/common.cuh: the shared-memory address every helper takes its operands by
#ifndef TILELANG_CUDA_COMMON_CUH
#define TILELANG_CUDA_COMMON_CUH

__device__ __forceinline__ unsigned tl_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

#endif  // TILELANG_CUDA_COMMON_CUH
