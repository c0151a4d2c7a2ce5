// tilelang_cuda/warp.cuh: warp election, lane search and warp reductions (NaN-keeping max / min)
#ifndef TILELANG_CUDA_WARP_CUH
#define TILELANG_CUDA_WARP_CUH

__device__ __forceinline__ bool tl_elect_one() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned pred;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n" : "=r"(pred));
  return pred != 0;
#else
  return (threadIdx.x % 32) == 0;
#endif
}
// one thread per group of `Extent` consecutive threads (0: the whole block): an elected lane of the group's first
// warp (groups narrower than a warp elect their first thread)
template <int Extent> __device__ __forceinline__ bool tl_shuffle_elect(int linear_tid) {
  if (Extent > 0 && Extent < 32) return linear_tid % Extent == 0;
  int warp = __shfl_sync(0xffffffffu, linear_tid / 32, 0);
  bool first = Extent == 0 ? warp == 0 : warp % (Extent / 32) == 0;
  return first && tl_elect_one();
}
#define tl_shuffle_elect_n(extent, tid) tl_shuffle_elect<extent>(tid)
__device__ __forceinline__ unsigned tl_fns(unsigned mask, unsigned base, int offset) {
  return __fns(mask, base, offset);
}

// ---- warp reductions through shfl.sync (butterfly: every lane of the group gets the result)
template <typename T> __device__ __forceinline__ T tl_shfl_xor(T v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask, 32);
}
__device__ __forceinline__ float tl_warp_sum(float v, int width) {
  for (int m = width >> 1; m > 0; m >>= 1) v += tl_shfl_xor(v, m);
  return v;
}
// max / min keeping a NaN of either operand (torch.amax / amin semantics; fmaxf / fminf drop it): one
// max.NaN / min.NaN on sm_80+
__host__ __device__ __forceinline__ float tl_max_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (b > a || isnan(b)) ? b : a;
#endif
}
__host__ __device__ __forceinline__ float tl_min_nan(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (b < a || isnan(b)) ? b : a;
#endif
}
// half / bfloat16 (sm_80+): __hmax_nan / __hmin_nan, found when the kernel's fp16 / bf16 headers are in
template <typename T> __device__ __forceinline__ T tl_max_nan(T a, T b) { return __hmax_nan(a, b); }
template <typename T> __device__ __forceinline__ T tl_min_nan(T a, T b) { return __hmin_nan(a, b); }
__device__ __forceinline__ float tl_warp_max(float v, int width) {
  for (int m = width >> 1; m > 0; m >>= 1) v = tl_max_nan(v, tl_shfl_xor(v, m));
  return v;
}
__device__ __forceinline__ float tl_warp_min(float v, int width) {
  for (int m = width >> 1; m > 0; m >>= 1) v = tl_min_nan(v, tl_shfl_xor(v, m));
  return v;
}

#endif  // TILELANG_CUDA_WARP_CUH
