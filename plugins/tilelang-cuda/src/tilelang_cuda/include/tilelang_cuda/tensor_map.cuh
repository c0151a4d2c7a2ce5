// tilelang_cuda/tensor_map.cuh: the kernel-parameter type of a TMA tensor map (the driver's CUtensorMap layout)
#ifndef TILELANG_CUDA_TENSOR_MAP_CUH
#define TILELANG_CUDA_TENSOR_MAP_CUH

struct __align__(64) tl_tensor_map_t { unsigned long long opaque[16]; };

#endif  // TILELANG_CUDA_TENSOR_MAP_CUH
