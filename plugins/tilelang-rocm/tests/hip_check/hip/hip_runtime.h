// A stand-in for <hip/hip_runtime.h> so that clang can check printed HIP sources with -nogpuinc
// (no ROCm install on the test machine): the declarations the sources use, nothing more.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

struct tl_thread_idx {
  __device__ unsigned int get_x() const { return __builtin_amdgcn_workitem_id_x(); }
  __device__ unsigned int get_y() const { return __builtin_amdgcn_workitem_id_y(); }
  __device__ unsigned int get_z() const { return __builtin_amdgcn_workitem_id_z(); }
  __declspec(property(get = get_x)) unsigned int x;
  __declspec(property(get = get_y)) unsigned int y;
  __declspec(property(get = get_z)) unsigned int z;
};
struct tl_block_idx {
  __device__ unsigned int get_x() const { return __builtin_amdgcn_workgroup_id_x(); }
  __device__ unsigned int get_y() const { return __builtin_amdgcn_workgroup_id_y(); }
  __device__ unsigned int get_z() const { return __builtin_amdgcn_workgroup_id_z(); }
  __declspec(property(get = get_x)) unsigned int x;
  __declspec(property(get = get_y)) unsigned int y;
  __declspec(property(get = get_z)) unsigned int z;
};
static constexpr __device__ tl_thread_idx threadIdx{};
static constexpr __device__ tl_block_idx blockIdx{};
__device__ inline void __syncthreads() { __builtin_amdgcn_s_barrier(); }

#define TL_VECTOR_TYPES(T, N)       \
  struct N##1 { T x; };             \
  struct N##2 { T x, y; };          \
  struct N##3 { T x, y, z; };       \
  struct N##4 { T x, y, z, w; };
TL_VECTOR_TYPES(float, float)
TL_VECTOR_TYPES(double, double)
TL_VECTOR_TYPES(int, int)
TL_VECTOR_TYPES(unsigned int, uint)
TL_VECTOR_TYPES(short, short)
TL_VECTOR_TYPES(unsigned short, ushort)
TL_VECTOR_TYPES(long long, longlong)
TL_VECTOR_TYPES(unsigned long long, ulonglong)
#undef TL_VECTOR_TYPES

__device__ float exp2f(float);
__device__ float expf(float);
__device__ float logf(float);
__device__ float log2f(float);
__device__ float sqrtf(float);
__device__ float rsqrtf(float);
__device__ float fabsf(float);
__device__ double fabs(double);
__device__ float sinf(float);
__device__ float cosf(float);
__device__ float tanhf(float);
__device__ inline int min(int a, int b) { return a < b ? a : b; }
__device__ inline int max(int a, int b) { return a > b ? a : b; }
__device__ inline float min(float a, float b) { return a < b ? a : b; }
__device__ inline float max(float a, float b) { return a > b ? a : b; }
