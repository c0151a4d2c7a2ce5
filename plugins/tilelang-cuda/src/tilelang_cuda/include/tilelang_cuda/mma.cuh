// tilelang_cuda/mma.cuh: ldmatrix, mma.sync (sm_70 m8n8k4, sm_80+ m16n8kK) and mma.sp (sm_80+; fp8 sm_89+)
#ifndef TILELANG_CUDA_MMA_CUH
#define TILELANG_CUDA_MMA_CUH

#include "tilelang_cuda/common.cuh"

// ---- ldmatrix: each lane passes the address of one 16-byte row of an 8x8 b16 matrix
__device__ __forceinline__ void tl_ldmatrix_x4(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tl_smem_addr(smem)));
}
__device__ __forceinline__ void tl_ldmatrix_x4_trans(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(tl_smem_addr(smem)));
}

// ---- mma.sync (sm_80+): D = A * B + D on one m16n8kK atom; a/b are the packed operand registers
__device__ __forceinline__ void tl_mma_f16_f32(void* acc, const void* a, const void* b) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
__device__ __forceinline__ void tl_mma_bf16_f32(void* acc, const void* a, const void* b) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
__device__ __forceinline__ void tl_mma_tf32_f32(void* acc, const void* a, const void* b) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
__device__ __forceinline__ void tl_mma_s8_s32(void* acc, const void* a, const void* b) {
  int* c = reinterpret_cast<int*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
}
// ---- mma.sync.m8n8k4 (Volta sm_70+): each quad-pair of lanes computes one 8x8x4 product; a / b point at the
// lane's four fp16 A / B values (any 2-byte alignment), acc at its eight fp32 or fp16 accumulators
__device__ __forceinline__ unsigned tl_pack_b16x2(const void* p, int i) {
  const unsigned short* h = reinterpret_cast<const unsigned short*>(p);
  return unsigned(h[i]) | (unsigned(h[i + 1]) << 16);
}
__device__ __forceinline__ void tl_mma_m8n8k4_f16_f32(void* acc, const void* a, const void* b) {
  float* c = reinterpret_cast<float*>(acc);
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9}, "
               "{%10, %11}, {%0, %1, %2, %3, %4, %5, %6, %7};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]), "+f"(c[4]), "+f"(c[5]), "+f"(c[6]), "+f"(c[7])
               : "r"(tl_pack_b16x2(a, 0)), "r"(tl_pack_b16x2(a, 2)), "r"(tl_pack_b16x2(b, 0)),
                 "r"(tl_pack_b16x2(b, 2)));
}
__device__ __forceinline__ void tl_mma_m8n8k4_f16_f16(void* acc, const void* a, const void* b) {
  unsigned short* h = reinterpret_cast<unsigned short*>(acc);
  unsigned c0 = tl_pack_b16x2(acc, 0), c1 = tl_pack_b16x2(acc, 2), c2 = tl_pack_b16x2(acc, 4),
           c3 = tl_pack_b16x2(acc, 6);
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0, %1, %2, %3}, {%4, %5}, {%6, %7}, "
               "{%0, %1, %2, %3};\n"
               : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)
               : "r"(tl_pack_b16x2(a, 0)), "r"(tl_pack_b16x2(a, 2)), "r"(tl_pack_b16x2(b, 0)),
                 "r"(tl_pack_b16x2(b, 2)));
  unsigned d[4] = {c0, c1, c2, c3};
  for (int i = 0; i < 4; ++i) {
    h[2 * i] = static_cast<unsigned short>(d[i] & 0xffffu);
    h[2 * i + 1] = static_cast<unsigned short>(d[i] >> 16);
  }
}
// ---- mma.sp (sm_80+): 2:4-sparse A (the compressed half of K), B as the fragments of its two K halves, the
// metadata register e (sparsity selector 0)
__device__ __forceinline__ void tl_mma_sp_f16_f32(void* acc, const void* a, const void* b_lo, const void* b_hi,
                                                  unsigned e) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);
  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), "r"(B1[1]),
                 "r"(e));
}
__device__ __forceinline__ void tl_mma_sp_bf16_f32(void* acc, const void* a, const void* b_lo, const void* b_hi,
                                                   unsigned e) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);
  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), "r"(B1[1]),
                 "r"(e));
}
__device__ __forceinline__ void tl_mma_sp_s8_s32(void* acc, const void* a, const void* b_lo, const void* b_hi,
                                                 unsigned e) {
  int* c = reinterpret_cast<int*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);
  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), "r"(B1[1]),
                 "r"(e));
}
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
__device__ __forceinline__ void tl_mma_sp_e4m3_f32(void* acc, const void* a, const void* b_lo, const void* b_hi,
                                                   unsigned e) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);
  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), "r"(B1[1]),
                 "r"(e));
}
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
__device__ __forceinline__ void tl_mma_sp_e5m2_f32(void* acc, const void* a, const void* b_lo, const void* b_hi,
                                                   unsigned e) {
  float* c = reinterpret_cast<float*>(acc);
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);
  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);
  asm volatile("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e5m2.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), "r"(B1[1]),
                 "r"(e));
}
#endif
// an A fragment (four 32-bit registers) taken from a register array (16-byte aligned offset)
__device__ __forceinline__ void tl_regs_copy16(void* dst, const void* src) {
  unsigned* d = reinterpret_cast<unsigned*>(dst);
  const unsigned* s = reinterpret_cast<const unsigned*>(src);
  d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3];
}
// one 32-bit operand register from a 32-bit element (tf32 operands are fp32 bit patterns)
__device__ __forceinline__ unsigned tl_bits32(float x) { return __float_as_uint(x); }
// the 32-bit register at a per-thread array element (a metadata register of T.ptx_mma_sp)
__device__ __forceinline__ unsigned tl_u32_at(const void* p) { return *reinterpret_cast<const unsigned*>(p); }

// ---- ldmatrix x1 / x2 (the x4 forms above) and a warp's 16x16 accumulator tile stored from registers
__device__ __forceinline__ void tl_ldmatrix_x1(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(tl_smem_addr(smem)));
}
__device__ __forceinline__ void tl_ldmatrix_x1_trans(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0]) : "r"(tl_smem_addr(smem)));
}
__device__ __forceinline__ void tl_ldmatrix_x2(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tl_smem_addr(smem)));
}
__device__ __forceinline__ void tl_ldmatrix_x2_trans(void* regs, const void* smem) {
  unsigned* r = reinterpret_cast<unsigned*>(regs);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tl_smem_addr(smem)));
}
// a warp's 16x16 accumulator tile (two m16n8 atoms, 8 values per lane) to memory with row stride `stride`
template <typename D, typename S>
__device__ __forceinline__ void tl_mma_store_16x16(D* dst, const S* regs, int stride, int lane) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int row = lane / 4 + 8 * ((j / 2) % 2), col = 2 * (lane % 4) + (j % 2) + 8 * (j / 4);
    dst[row * stride + col] = (D)regs[j];
  }
}

#endif  // TILELANG_CUDA_MMA_CUH
