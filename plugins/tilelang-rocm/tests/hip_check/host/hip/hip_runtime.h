// A host stand-in for <hip/hip_runtime.h>: printed HIP kernels compile as ordinary C++ functions, so that the
// tests can run one "thread" of them on the CPU (clang++ -x c++) and check lane-by-lane semantics.
#pragma once
#include <math.h>
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __launch_bounds__(n)

struct tl_dim3 { unsigned int x, y, z; };
inline tl_dim3 threadIdx{0, 0, 0};
inline tl_dim3 blockIdx{0, 0, 0};
inline void __syncthreads() {}

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

template <typename T> inline T min(T a, T b) { return a < b ? a : b; }
template <typename T> inline T max(T a, T b) { return a > b ? a : b; }
