// Types and helpers that the HIP source printed by tilelang_rocm.hip_codegen relies on.
// With a ROCm install the vendor half / bfloat16 types are used; without one (-nogpuinc checks) the
// clang built-in _Float16 / __bf16 stand in for them.
#pragma once
#include <hip/hip_runtime.h>
#include <stdint.h>

#if defined(__has_include) && __has_include(<hip/hip_fp16.h>) && __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
#include <hip/hip_fp16.h>
typedef __hip_bfloat16 bfloat16_t;
#else
typedef _Float16 half;
typedef __bf16 bfloat16_t;
__device__ inline half __habs(half x) { return __builtin_bit_cast(half, (unsigned short)(__builtin_bit_cast(unsigned short, x) & 0x7FFFu)); }
__device__ inline bfloat16_t __habs(bfloat16_t x) { return __builtin_bit_cast(bfloat16_t, (unsigned short)(__builtin_bit_cast(unsigned short, x) & 0x7FFFu)); }
#endif

typedef unsigned int uint;

// vectors of 16-bit floats: lanes are read and written through a pointer to the first lane
struct float16x2 { half x, y; };
struct float16x4 { half x, y, z, w; };
struct float16x8 { float16x4 x, y; };
struct bfloat16x2 { bfloat16_t x, y; };
struct bfloat16x4 { bfloat16_t x, y, z, w; };
struct bfloat16x8 { bfloat16x4 x, y; };

// float8: one byte per lane; pairs through tl_fp8x2_get_lane / tl_fp8x2_set_lane, wider vectors as nested halves
struct fp8_e4_t { unsigned char data; };
struct fp8_e5_t { unsigned char data; };
#define TL_FP8_VECTORS(T)                        \
  struct T##_2_t { T##_t x, y; };                \
  struct T##_4_t { T##_t x, y, z, w; };          \
  struct T##_8_t { T##_4_t x, y; };              \
  struct T##_16_t { T##_8_t x, y; };             \
  struct T##_32_t { T##_16_t x, y; };
TL_FP8_VECTORS(fp8_e4)
TL_FP8_VECTORS(fp8_e5)
#undef TL_FP8_VECTORS

template <typename S, typename V>
__device__ inline S tl_fp8x2_get_lane(const V &v, int lane) { return lane == 0 ? v.x : v.y; }
template <typename V, typename S>
__device__ inline void tl_fp8x2_set_lane(V &v, int lane, S value) { (lane == 0 ? v.x : v.y) = value; }

// float4 (e2m1): two lanes per byte, accessed by x() / y() and set_x() / set_y(); wider vectors nest pairs
struct fp4_e2_t { unsigned char bits; };
struct fp4_e2_2_t {
  unsigned char data;
  __device__ fp4_e2_t x() const { return fp4_e2_t{(unsigned char)(data & 0x0Fu)}; }
  __device__ fp4_e2_t y() const { return fp4_e2_t{(unsigned char)(data >> 4)}; }
  __device__ void set_x(fp4_e2_t v) { data = (unsigned char)((data & 0xF0u) | (v.bits & 0x0Fu)); }
  __device__ void set_y(fp4_e2_t v) { data = (unsigned char)((data & 0x0Fu) | ((v.bits & 0x0Fu) << 4)); }
};
struct fp4_e2_4_t { fp4_e2_2_t x, y; };
struct fp4_e2_8_t { fp4_e2_4_t x, y; };
struct fp4_e2_16_t { fp4_e2_8_t x, y; };
struct fp4_e2_32_t { fp4_e2_16_t x, y; };
struct fp4_e2_64_t { fp4_e2_32_t x, y; };

// floor division and modulo of integers (the result of floordiv rounds toward negative infinity)
template <typename T>
__device__ inline T tl_floordiv(T a, T b) { T q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }
template <typename T>
__device__ inline T tl_floormod(T a, T b) { T r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }
