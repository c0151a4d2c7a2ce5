// tilelang_cuda/atomic.cuh: floating-point max / min atomics CUDA lacks (compare-and-swap loops)
#ifndef TILELANG_CUDA_ATOMIC_CUH
#define TILELANG_CUDA_ATOMIC_CUH

// ---- atomics CUDA lacks for floating point (compare-and-swap loops)
__device__ __forceinline__ float tl_atomic_max(float* addr, float v) {
  int* p = reinterpret_cast<int*>(addr);
  int old = *p;
  while (__int_as_float(old) < v) {
    int prev = atomicCAS(p, old, __float_as_int(v));
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
__device__ __forceinline__ float tl_atomic_min(float* addr, float v) {
  int* p = reinterpret_cast<int*>(addr);
  int old = *p;
  while (__int_as_float(old) > v) {
    int prev = atomicCAS(p, old, __float_as_int(v));
    if (prev == old) break;
    old = prev;
  }
  return __int_as_float(old);
}
__device__ __forceinline__ int tl_atomic_max(int* addr, int v) { return atomicMax(addr, v); }
__device__ __forceinline__ int tl_atomic_min(int* addr, int v) { return atomicMin(addr, v); }
__device__ __forceinline__ unsigned tl_atomic_max(unsigned* addr, unsigned v) { return atomicMax(addr, v); }
__device__ __forceinline__ unsigned tl_atomic_min(unsigned* addr, unsigned v) { return atomicMin(addr, v); }

#endif  // TILELANG_CUDA_ATOMIC_CUH
