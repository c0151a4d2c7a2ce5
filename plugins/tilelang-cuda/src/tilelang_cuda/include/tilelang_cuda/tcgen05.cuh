// tilelang_cuda/tcgen05.cuh: tensor memory and tcgen05 MMA (sm_100a)
#ifndef TILELANG_CUDA_TCGEN05_CUH
#define TILELANG_CUDA_TCGEN05_CUH

#include "tilelang_cuda/common.cuh"

// a shared-memory matrix descriptor of tcgen05 (sm_100): start, leading / stride byte offsets, fixed 0b001 at
// bits 46-48, swizzle mode at bits 61-63 (0 none, 2 128B, 4 64B, 6 32B)
__device__ __forceinline__ unsigned long long tl_umma_desc(const void* smem, int lbo, int sbo, int swizzle) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  d |= 1ull << 46;
  d |= (unsigned long long)(swizzle & 7) << 61;
  return d;
}
// `tl_umma_desc` with the matrix base offset (bits 49-51) and the leading-dimension mode (bit 52: 1 = the leading
// field holds an absolute address)
__device__ __forceinline__ unsigned long long tl_umma_desc_based(const void* smem, int lbo, int sbo, int swizzle,
                                                                 int base_offset, int lbo_absolute) {
  return tl_umma_desc(smem, lbo, sbo, swizzle) | (unsigned long long)(base_offset & 7) << 49
         | (unsigned long long)(lbo_absolute & 1) << 52;
}
// the descriptor of a tile the kernel stores in a hardware-swizzled layout (`tl_umma_desc` under the name the
// swizzle pass looks for: the tile's storage follows the descriptor's swizzle)
__device__ __forceinline__ unsigned long long tl_umma_desc_sw(const void* smem, int lbo, int sbo, int swizzle) {
  return tl_umma_desc(smem, lbo, sbo, swizzle);
}
// one warp: transpose a 128-word chunk of packed scale factors in shared memory (4 x 32 words -> 32 x 4)
__device__ __forceinline__ void tl_tcgen05_sf_warp_transpose(unsigned* chunk) {
  int lane = threadIdx.x % 32;
  unsigned v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = chunk[i * 32 + lane];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < 4; ++i) chunk[lane * 4 + i] = v[i];
  __syncwarp();
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
// one warp: allocate `cols` TMEM columns (a power of two >= 32); the base address lands in *slot (shared)
__device__ __forceinline__ void tl_tmem_alloc(unsigned* slot, int cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n"
               :: "r"(tl_smem_addr(slot)), "r"(cols) : "memory");
}
// after the CTA's last allocation: give up the right to allocate, so other CTAs on the SM need not wait for it
__device__ __forceinline__ void tl_tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tl_tmem_dealloc(unsigned base, int cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" :: "r"(base), "r"(cols) : "memory");
}
// warp 0 of each CTA of a pair: allocate the same `cols` TMEM columns in both (cta_group::2)
__device__ __forceinline__ void tl_tmem_alloc_2cta(unsigned* slot, int cols) {
  asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n"
               :: "r"(tl_smem_addr(slot)), "r"(cols) : "memory");
}
__device__ __forceinline__ void tl_tmem_relinquish_2cta() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void tl_tmem_dealloc_2cta(unsigned base, int cols) {
  asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" :: "r"(base), "r"(cols) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}
__device__ __forceinline__ void tl_tcgen05_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}
// the mbarrier tracks the completion of every tcgen05.mma this thread issued before
__device__ __forceinline__ void tl_tcgen05_commit(void* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n"
               :: "r"(tl_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_commit_2cta(void* bar) {
  asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;\n"
               :: "r"(tl_smem_addr(bar)), "h"((unsigned short)3) : "memory");
}
// D[tmem] (+)= A[smem] * B[smem] for one instruction descriptor; issued by one thread
__device__ __forceinline__ void tl_tcgen05_mma_ss(unsigned d_tmem, unsigned long long a_desc,
                                                  unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts(unsigned d_tmem, unsigned a_tmem, unsigned long long b_desc,
                                                  unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// tl_tcgen05_mma_{ss,ts}_<kind>_cg<g>: the same MMA for any kind and CTA group (cta_group::2: the pair's
// M = 2 x 128 rows, issued by the even CTA); _masked: the one-CTA form with its disable-output-lane masks (four
// 32-bit words over the 128 lanes); tl_tcgen05_mma_ws_ss_<kind>: the weight-stationary form (.ws: M 32 / 64 / 128,
// B kept in the collector buffer; one CTA only)
__device__ __forceinline__ void tl_tcgen05_mma_ss_f16_cg1(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f16_cg1(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_f16_masked(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f16_masked(unsigned d_tmem, unsigned a_tmem,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ws_ss_f16(unsigned d_tmem, unsigned long long a_desc,
                                                         unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.ws.cta_group::1.kind::f16 [%0], %1, %2, %3, p, 0;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_tf32_cg1(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_tf32_cg1(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::tf32 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_tf32_masked(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_tf32_masked(unsigned d_tmem, unsigned a_tmem,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::tf32 [%0], [%1], %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ws_ss_tf32(unsigned d_tmem, unsigned long long a_desc,
                                                         unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.ws.cta_group::1.kind::tf32 [%0], %1, %2, %3, p, 0;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_f8f6f4_cg1(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f8f6f4_cg1(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_f8f6f4_masked(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f8f6f4_masked(unsigned d_tmem, unsigned a_tmem,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], [%1], %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ws_ss_f8f6f4(unsigned d_tmem, unsigned long long a_desc,
                                                         unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.ws.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p, 0;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_i8_cg1(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::i8 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_i8_cg1(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::i8 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_i8_masked(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::i8 [%0], %1, %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_i8_masked(unsigned d_tmem, unsigned a_tmem,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned m0, unsigned m1, unsigned m2, unsigned m3) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::i8 [%0], [%1], %2, %3, {%5, %6, %7, %8}, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(m0), "r"(m1), "r"(m2),
                  "r"(m3) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ws_ss_i8(unsigned d_tmem, unsigned long long a_desc,
                                                         unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.ws.cta_group::1.kind::i8 [%0], %1, %2, %3, p, 0;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
// block-scaled MX formats: E8M0 scale factors of A and B in TMEM (the descriptor's SF ids pick their bytes)
__device__ __forceinline__ void tl_tcgen05_mma_bs_mxf8f6f4_cg1(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned sfa_tmem, unsigned sfb_tmem) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(sfa_tmem),
                  "r"(sfb_tmem) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_f16_cg2(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f16_cg2(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_tf32_cg2(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::tf32 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_tf32_cg2(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::tf32 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_f8f6f4_cg2(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_f8f6f4_cg2(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::f8f6f4 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ss_i8_cg2(unsigned d_tmem, unsigned long long a_desc,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::i8 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_ts_i8_cg2(unsigned d_tmem, unsigned a_tmem,
                                                        unsigned long long b_desc, unsigned idesc, int accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::i8 [%0], [%1], %2, %3, p;\n}\n"
               :: "r"(d_tmem), "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(accumulate) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_mma_bs_mxf8f6f4_cg2(unsigned d_tmem, unsigned long long a_desc,
    unsigned long long b_desc, unsigned idesc, int accumulate, unsigned sfa_tmem, unsigned sfb_tmem) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n}\n"
               :: "r"(d_tmem), "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(accumulate), "r"(sfa_tmem),
                  "r"(sfb_tmem) : "memory");
}
// tl_tcgen05_cp_warpx4 for a CTA pair (cta_group::2): each CTA's chunk lands in its own TMEM; issued by the even CTA
__device__ __forceinline__ void tl_tcgen05_cp_warpx4_2cta(const void* smem, unsigned tmem) {
  unsigned long long desc = 0;
  desc |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  desc |= (unsigned long long)(128 >> 4) << 16;
  desc |= 1ull << 46;
  asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" :: "r"(tmem), "l"(desc) : "memory");
}
// 32 consecutive 32-bit columns of the thread's datapath in one instruction (.x32); stores 4 (.x4)
__device__ __forceinline__ void tl_tcgen05_ld_32x32b_x32(unsigned taddr, unsigned* r) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]), "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]), "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]), "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
               : "r"(taddr) : "memory");
}
__device__ __forceinline__ void tl_tcgen05_st_32x32b_x4(unsigned taddr, const unsigned* r) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1, %2, %3, %4};\n" :: "r"(taddr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
// each thread of a warp reads `N` consecutive 32-bit columns of its datapath (warp w of the warpgroup: rows 32w..):
// whole groups of 32 columns one instruction each, the rest one column an instruction. Stores go 4 columns an
// instruction: wider ones keep more registers live at once and ptxas spills more (Blackwell flash attention, d128)
template <int N> __device__ __forceinline__ void tl_tcgen05_ld_32x32b(unsigned taddr, void* regs) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
#pragma unroll
  for (int i = 0; i + 32 <= N; i += 32) tl_tcgen05_ld_32x32b_x32(taddr + i, r + i);
#pragma unroll
  for (int i = N / 32 * 32; i < N; ++i)
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\n" : "=r"(r[i]) : "r"(taddr + i) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}
#define tl_tcgen05_ld_32x32b_n(n, taddr, regs) tl_tcgen05_ld_32x32b<n>(taddr, regs)
template <int N> __device__ __forceinline__ void tl_tcgen05_st_32x32b(unsigned taddr, const void* regs) {
  const unsigned* r = reinterpret_cast<const unsigned*>(regs);
#pragma unroll
  for (int i = 0; i + 4 <= N; i += 4) tl_tcgen05_st_32x32b_x4(taddr + i, r + i);
#pragma unroll
  for (int i = N / 4 * 4; i < N; ++i)
    asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {%1};\n" :: "r"(taddr + i), "r"(r[i]) : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
}
#define tl_tcgen05_st_32x32b_n(n, taddr, regs) tl_tcgen05_st_32x32b<n>(taddr, regs)
// 128 words of packed scale factors: shared -> TMEM, four warps' datapaths (32x128b.warpx4)
__device__ __forceinline__ void tl_tcgen05_cp_warpx4(const void* smem, unsigned tmem) {
  unsigned long long desc = 0;
  desc |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  desc |= (unsigned long long)(128 >> 4) << 16;
  desc |= 1ull << 46;
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" :: "r"(tmem), "l"(desc) : "memory");
}
#endif  // sm_100+

#endif  // TILELANG_CUDA_TCGEN05_CUH
