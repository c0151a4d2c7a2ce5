// tilelang_cuda/memory.cuh: predicated global loads / stores and shared loads / stores of 32 to 256 bits
#ifndef TILELANG_CUDA_MEMORY_CUH
#define TILELANG_CUDA_MEMORY_CUH

#include "tilelang_cuda/common.cuh"

__device__ __forceinline__ unsigned tl_ldg32(const void* p, bool pred) {
  unsigned v{};
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %1, 0;\n @p ld.global.nc.b32 {%0}, [%2];\n}\n"
               : "+r"(v) : "r"((int)pred), "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void tl_stg32(void* p, unsigned v, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.global.b32 [%1], {%2};\n}\n"
               :: "r"((int)pred), "l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned tl_lds32(const void* p) {
  unsigned v{};
  asm volatile("ld.shared.b32 {%0}, [%1];\n" : "+r"(v) : "r"(tl_smem_addr(p)) : "memory");
  return v;
}
__device__ __forceinline__ void tl_sts32(void* p, unsigned v) {
  asm volatile("st.shared.b32 [%0], {%1};\n" :: "r"(tl_smem_addr(p)), "r"(v) : "memory");
}
__device__ __forceinline__ uint2 tl_ldg64(const void* p, bool pred) {
  uint2 v{};
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p ld.global.nc.v2.b32 {%0, %1}, [%3];\n}\n"
               : "+r"(v.x), "+r"(v.y) : "r"((int)pred), "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void tl_stg64(void* p, uint2 v, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.global.v2.b32 [%1], {%2, %3};\n}\n"
               :: "r"((int)pred), "l"(p), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ uint2 tl_lds64(const void* p) {
  uint2 v{};
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "+r"(v.x), "+r"(v.y) : "r"(tl_smem_addr(p)) : "memory");
  return v;
}
__device__ __forceinline__ void tl_sts64(void* p, uint2 v) {
  asm volatile("st.shared.v2.b32 [%0], {%1, %2};\n" :: "r"(tl_smem_addr(p)), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ uint4 tl_ldg128(const void* p, bool pred) {
  uint4 v{};
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n @p ld.global.nc.v4.b32 {%0, %1, %2, %3}, [%5];\n}\n"
               : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w) : "r"((int)pred), "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void tl_stg128(void* p, uint4 v, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.global.v4.b32 [%1], {%2, %3, %4, %5};\n}\n"
               :: "r"((int)pred), "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ uint4 tl_lds128(const void* p) {
  uint4 v{};
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "+r"(v.x), "+r"(v.y), "+r"(v.z), "+r"(v.w)
               : "r"(tl_smem_addr(p)) : "memory");
  return v;
}
__device__ __forceinline__ void tl_sts128(void* p, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" :: "r"(tl_smem_addr(p)), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w) : "memory");
}
// the loads into a register array (what the lowering emits: TVM prints vector-typed calls lane by lane)
__device__ __forceinline__ void tl_ldg32_to(void* dst, const void* p, bool pred) {
  *reinterpret_cast<unsigned*>(dst) = tl_ldg32(p, pred);
}
__device__ __forceinline__ void tl_lds32_to(void* dst, const void* p) {
  *reinterpret_cast<unsigned*>(dst) = tl_lds32(p);
}
__device__ __forceinline__ void tl_ldg64_to(void* dst, const void* p, bool pred) {
  *reinterpret_cast<uint2*>(dst) = tl_ldg64(p, pred);
}
__device__ __forceinline__ void tl_lds64_to(void* dst, const void* p) {
  *reinterpret_cast<uint2*>(dst) = tl_lds64(p);
}
__device__ __forceinline__ void tl_ldg128_to(void* dst, const void* p, bool pred) {
  *reinterpret_cast<uint4*>(dst) = tl_ldg128(p, pred);
}
__device__ __forceinline__ void tl_lds128_to(void* dst, const void* p) {
  *reinterpret_cast<uint4*>(dst) = tl_lds128(p);
}

// 256-bit loads / stores (sm_100+)
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
__device__ __forceinline__ ulonglong4 tl_ldg256(const void* p, bool pred) {
  ulonglong4 v{};
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n @p ld.global.nc.v4.b64 {%0, %1, %2, %3}, [%5];\n}\n"
               : "+l"(v.x), "+l"(v.y), "+l"(v.z), "+l"(v.w) : "r"((int)pred), "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void tl_stg256(void* p, ulonglong4 v, bool pred) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p st.global.v4.b64 [%1], {%2, %3, %4, %5};\n}\n"
               :: "r"((int)pred), "l"(p), "l"(v.x), "l"(v.y), "l"(v.z), "l"(v.w) : "memory");
}
__device__ __forceinline__ void tl_ldg256_to(void* dst, const void* p, bool pred) {
  *reinterpret_cast<ulonglong4*>(dst) = tl_ldg256(p, pred);
}
#endif  // sm_100+

#endif  // TILELANG_CUDA_MEMORY_CUH
