// tilelang_cuda/grid.cuh: a barrier over every thread of the grid (T.sync_grid). The kernel must be launched
// cooperatively (cuLaunchCooperativeKernel: every block resident at once); tilelang-cuda's launcher does so for
// the kernels that call it.
#ifndef TILELANG_CUDA_GRID_CUH
#define TILELANG_CUDA_GRID_CUH

#include <cooperative_groups.h>

__device__ __forceinline__ void tl_sync_grid() { cooperative_groups::this_grid().sync(); }

#endif  // TILELANG_CUDA_GRID_CUH
