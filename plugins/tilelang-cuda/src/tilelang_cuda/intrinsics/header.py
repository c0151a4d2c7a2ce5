"""The inline-PTX helper header prepended to every generated CUDA kernel.

Lowering emits ``call_extern("tl_...", ...)`` on these helpers (tensor-core MMA, ldmatrix, cp.async, warp
shuffles, float atomics); `with_header` puts their definitions in front of TVM's CUDA source. Helpers whose
operand count depends on a shape (wgmma's accumulator list) are generated for the shapes the source uses.
"""

from __future__ import annotations

import re

HEADER_GUARD = "TILELANG_CUDA_INTRINSICS"

# mma.sp (sm_80+): (name suffix, shape, PTX types D.A.B.C, accumulator C type, its asm constraint, arch guard)
_MMA_SP_HELPERS = (
    ("f16_f32", "m16n8k32", "f32.f16.f16.f32", "float", "f", 0),
    ("bf16_f32", "m16n8k32", "f32.bf16.bf16.f32", "float", "f", 0),
    ("s8_s32", "m16n8k64", "s32.s8.s8.s32", "int", "r", 0),
    ("e4m3_f32", "m16n8k64", "f32.e4m3.e4m3.f32", "float", "f", 890),
    ("e5m2_f32", "m16n8k64", "f32.e5m2.e5m2.f32", "float", "f", 890),
)


def _mma_sp_helper(suffix: str, shape: str, types: str, c_type: str, c_reg: str, min_arch: int) -> str:
    """``tl_mma_sp_<suffix>``: one ``mma.sp::ordered_metadata`` (sparsity selector 0) on a 2:4-sparse A fragment,
    B's two K-half fragments and the metadata register; guarded by ``__CUDA_ARCH__ >= min_arch`` when nonzero."""
    name = f"tl_mma_sp_{suffix}"
    head = f"__device__ __forceinline__ void {name}(void* acc, const void* a, const void* b_lo, const void* b_hi,\n"
    pad = " " * head.index("(void*")
    body = (f"{head}{pad} unsigned e) {{\n"
            f"  {c_type}* c = reinterpret_cast<{c_type}*>(acc);\n"
            "  const unsigned* A = reinterpret_cast<const unsigned*>(a);\n"
            "  const unsigned* B0 = reinterpret_cast<const unsigned*>(b_lo);\n"
            "  const unsigned* B1 = reinterpret_cast<const unsigned*>(b_hi);\n"
            f'  asm volatile("mma.sp::ordered_metadata.sync.aligned.{shape}.row.col.{types} {{%0, %1, %2, %3}}, "\n'
            '               "{%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;\\n"\n'
            f'               : "+{c_reg}"(c[0]), "+{c_reg}"(c[1]), "+{c_reg}"(c[2]), "+{c_reg}"(c[3])\n'
            '               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B0[0]), "r"(B0[1]), "r"(B1[0]), '
            '"r"(B1[1]),\n'
            '                 "r"(e));\n'
            "}\n")
    if min_arch:
        return f"#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= {min_arch}\n{body}#endif\n"
    return body


_COMMON = r"""
#ifndef TILELANG_CUDA_INTRINSICS
#define TILELANG_CUDA_INTRINSICS

__device__ __forceinline__ unsigned tl_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

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
""" + "".join(_mma_sp_helper(*kind) for kind in _MMA_SP_HELPERS).rstrip("\n") + r"""
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

// ---- cp.async (sm_80+): 16-byte global -> shared copies; bytes < 16 zero-fills the rest
__device__ __forceinline__ void tl_cp_async16(void* smem, const void* gmem, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :: "r"(tl_smem_addr(smem)), "l"(gmem), "r"(bytes) : "memory");
}
__device__ __forceinline__ void tl_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void tl_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // the landed bytes may next be read by wgmma through a descriptor (the async proxy): the writing thread
  // orders them before that proxy here, ahead of the barrier the readers wait on (the reader-side fence the
  // gemm issues after that barrier is kept as well)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
#define tl_cp_async_wait_group(n) tl_cp_async_wait<n>()

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
"""

_HOPPER = r"""
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// ---- wgmma (sm_90a): warpgroup-wide MMA; B comes from shared memory through a matrix descriptor
__device__ __forceinline__ unsigned long long tl_wgmma_desc(const void* smem, int lbo, int sbo) {
  unsigned long long d = 0;
  d |= (unsigned long long)((tl_smem_addr(smem) & 0x3FFFF) >> 4);
  d |= (unsigned long long)((lbo & 0x3FFFF) >> 4) << 16;
  d |= (unsigned long long)((sbo & 0x3FFFF) >> 4) << 32;
  return d;  // base offset 0, no swizzle
}
// a swizzled descriptor (mode 1 = 128B, 2 = 64B, 3 = 32B); the tile starts on its swizzle repeat: base offset 0
__device__ __forceinline__ unsigned long long tl_wgmma_desc_sw(const void* smem, int lbo, int sbo, int mode) {
  return tl_wgmma_desc(smem, lbo, sbo) | ((unsigned long long)(mode & 3) << 62);
}
// make this thread's generic-proxy shared writes (st.shared, cp.async) visible to the async proxy (wgmma reads)
__device__ __forceinline__ void tl_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void tl_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void tl_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
// wait_group N: all but the newest N committed batches are complete (their shared reads, accumulator writes)
template <int N> __device__ __forceinline__ void tl_wgmma_wait_n() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}
#define tl_wgmma_wait_group(n) tl_wgmma_wait_n<n>()
// the accumulator registers as outputs of an empty asm: no read of them is scheduled above the wait before it
__device__ __forceinline__ void tl_wgmma_fence_acc(void* acc, int regs) {
  float* c = reinterpret_cast<float*>(acc);
#pragma unroll
  for (int i = 0; i < regs; ++i) asm volatile("" : "+f"(c[i]) :: "memory");
}
#endif
"""

_END = "#endif  // TILELANG_CUDA_INTRINSICS\n"

_WGMMA_NAME = re.compile(r"\btl_wgmma_m64n(\d+)k16_(f16|bf16)\b")
_WGMMA_SS_NAME = re.compile(r"\btl_wgmma_ss_m64n(\d+)k16_(f16|bf16)_t([01])([01])\b")
# fp8 (sm_90a): k32, A and B types named (e4m3 / e5m2, either mix), both operands K-major (no transpose)
_WGMMA_SS_FP8_NAME = re.compile(r"\btl_wgmma_ss_m64n(\d+)k32_(e4m3|e5m2)(e4m3|e5m2)_t00\b")
_WGMMA_RS_NAME = re.compile(r"\btl_wgmma_rs_m64n(\d+)k16_(f16|bf16)_t([01])\b")
_PTX_TYPE = {"f16": "f16", "bf16": "bf16"}


def wgmma_helper(n: int, ab: str, trans_b: int | None = None) -> str:
    """``tl_wgmma_m64n{n}k16_{ab}(acc, a_regs, b_desc)``: A from registers, B (K-major) from shared memory; with
    `trans_b` given, ``tl_wgmma_rs_m64n{n}k16_{ab}_t{trans_b}`` (``trans_b`` = 1: B is N-major)."""
    regs = n // 2  # fp32 accumulators per thread: 64 * n / 128
    acc = ", ".join(f"%{i}" for i in range(regs))
    a = ", ".join(f"%{regs + i}" for i in range(4))
    outs = ", ".join(f'"+f"(c[{i}])' for i in range(regs))
    ptx = ("{\\n.reg .pred p;\\n"
           f"setp.ne.b32 p, %{regs + 5}, 0;\\n"
           f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{_PTX_TYPE[ab]}.{_PTX_TYPE[ab]} "
           f"{{{acc}}}, {{{a}}}, %{regs + 4}, p, 1, 1, {trans_b or 0};\\n}}\\n")
    name = f"tl_wgmma_m64n{n}k16_{ab}" if trans_b is None else f"tl_wgmma_rs_m64n{n}k16_{ab}_t{trans_b}"
    return (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        f"__device__ __forceinline__ void {name}(void* acc, const void* a, "
        "unsigned long long b_desc) {\n"
        "  float* c = reinterpret_cast<float*>(acc);\n"
        "  const unsigned* A = reinterpret_cast<const unsigned*>(a);\n"
        f'  asm volatile("{ptx}"\n'
        f"               : {outs}\n"
        '               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "l"(b_desc), "r"(1));\n'
        "}\n#endif\n"
    )


def wgmma_ss_fp8_helper(n: int, a: str, b: str) -> str:
    """``tl_wgmma_ss_m64n{n}k32_{a}{b}_t00(acc, a_desc, b_desc)``: fp8 A (`a`) and B (`b`) from shared memory
    through matrix descriptors, both K-major (PTX has no transpose immediates for 8-bit types)."""
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(c[{i}])' for i in range(regs))
    ptx = ("{\\n.reg .pred p;\\n"
           f"setp.ne.b32 p, %{regs + 2}, 0;\\n"
           f"wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{a}.{b} "
           f"{{{acc}}}, %{regs}, %{regs + 1}, p, 1, 1;\\n}}\\n")
    return (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        f"__device__ __forceinline__ void tl_wgmma_ss_m64n{n}k32_{a}{b}_t00(void* acc, "
        "unsigned long long a_desc, unsigned long long b_desc) {\n"
        "  float* c = reinterpret_cast<float*>(acc);\n"
        f'  asm volatile("{ptx}"\n'
        f"               : {outs}\n"
        '               : "l"(a_desc), "l"(b_desc), "r"(1));\n'
        "}\n#endif\n"
    )


def wgmma_ss_helper(n: int, ab: str, trans_a: int, trans_b: int) -> str:
    """``tl_wgmma_ss_m64n{n}k16_{ab}_t{ta}{tb}(acc, a_desc, b_desc)``: both operands from shared memory through
    matrix descriptors; ``trans_a`` = 1: A is M-major, ``trans_b`` = 1: B is N-major (PTX imm-trans-a/b)."""
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(c[{i}])' for i in range(regs))
    ptx = ("{\\n.reg .pred p;\\n"
           f"setp.ne.b32 p, %{regs + 2}, 0;\\n"
           f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{_PTX_TYPE[ab]}.{_PTX_TYPE[ab]} "
           f"{{{acc}}}, %{regs}, %{regs + 1}, p, 1, 1, {trans_a}, {trans_b};\\n}}\\n")
    return (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        f"__device__ __forceinline__ void tl_wgmma_ss_m64n{n}k16_{ab}_t{trans_a}{trans_b}(void* acc, "
        "unsigned long long a_desc, unsigned long long b_desc) {\n"
        "  float* c = reinterpret_cast<float*>(acc);\n"
        f'  asm volatile("{ptx}"\n'
        f"               : {outs}\n"
        '               : "l"(a_desc), "l"(b_desc), "r"(1));\n'
        "}\n#endif\n"
    )


_WGMMA_SD_NAME = re.compile(r"\btl_wgmma_ss_m64n(\d+)k16_(f16|bf16)_t([01])([01])_sd\b")


def wgmma_ss_scaled_helper(n: int, ab: str, trans_a: int, trans_b: int) -> str:
    """``tl_wgmma_ss_m64n{n}k16_{ab}_t{ta}{tb}_sd(acc, a_desc, b_desc, scale_d)``: `wgmma_ss_helper` whose
    accumulate flag is an operand (``scale_d`` 0: D = A * B, overwriting the accumulators)."""
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(c[{i}])' for i in range(regs))
    ptx = ("{\\n.reg .pred p;\\n"
           f"setp.ne.b32 p, %{regs + 2}, 0;\\n"
           f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{_PTX_TYPE[ab]}.{_PTX_TYPE[ab]} "
           f"{{{acc}}}, %{regs}, %{regs + 1}, p, 1, 1, {trans_a}, {trans_b};\\n}}\\n")
    return (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        f"__device__ __forceinline__ void tl_wgmma_ss_m64n{n}k16_{ab}_t{trans_a}{trans_b}_sd(void* acc, "
        "unsigned long long a_desc, unsigned long long b_desc, int scale_d) {\n"
        "  float* c = reinterpret_cast<float*>(acc);\n"
        f'  asm volatile("{ptx}"\n'
        f"               : {outs}\n"
        '               : "l"(a_desc), "l"(b_desc), "r"(scale_d));\n'
        "}\n#endif\n"
    )


_WGMMA_SP_NAME = re.compile(r"\btl_wgmma_sp_m64n(\d+)k32_(f16|bf16)\b")
# the dialect's forms (T.ptx_wgmma_sp_ss / _rs): transposes and a scale-d operand; rs has trans_a 0
_WGMMA_SP_FORM_NAME = re.compile(r"\btl_wgmma_sp_(ss|rs)_m64n(\d+)k32_(f16|bf16)_t([01])([01])_sd\b")


def wgmma_sp_helper(n: int, ab: str, form: str | None = None, trans_a: int = 0, trans_b: int = 0) -> str:
    """``tl_wgmma_sp_m64n{n}k32_{ab}(acc, a_regs, b_desc, e)``: 2:4-sparse A (its compressed half of K) from
    registers, B (K-major) from shared memory, metadata register `e` (sparsity selector 0). With `form` ``"rs"``
    / ``"ss"``: ``tl_wgmma_sp_{form}_m64n{n}k32_{ab}_t{trans_a}{trans_b}_sd(acc, a, b_desc, e, scale_d)``, A
    registers (rs) or an A descriptor (ss), the transpose immediates and a scale-d operand (0 overwrites)."""
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outs = ", ".join(f'"+f"(c[{i}])' for i in range(regs))
    if form == "ss":
        a, nxt, a_param = f"%{regs}", regs + 1, "unsigned long long a_desc"
        a_in, imms = '"l"(a_desc)', f"{trans_a}, {trans_b}"
    else:
        a, nxt, a_param = "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}", regs + 4, "const void* a"
        a_in, imms = '"r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3])', f"{trans_b}"
    ptx = ("{\\n.reg .pred p;\\n"
           f"setp.ne.b32 p, %{nxt + 2}, 0;\\n"
           f"wgmma.mma_async.sp.sync.aligned.m64n{n}k32.f32.{_PTX_TYPE[ab]}.{_PTX_TYPE[ab]} "
           f"{{{acc}}}, {a}, %{nxt}, %{nxt + 1}, 0, p, 1, 1, {imms};\\n}}\\n")
    if form is None:
        name, scale_param, scale_in = f"tl_wgmma_sp_m64n{n}k32_{ab}", "", '"r"(1)'
    else:
        name = f"tl_wgmma_sp_{form}_m64n{n}k32_{ab}_t{trans_a}{trans_b}_sd"
        scale_param, scale_in = ", int scale_d", '"r"(scale_d)'
    a_cast = "" if form == "ss" else "  const unsigned* A = reinterpret_cast<const unsigned*>(a);\n"
    return (
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        f"__device__ __forceinline__ void {name}(void* acc, {a_param}, "
        f"unsigned long long b_desc, unsigned e{scale_param}) {{\n"
        "  float* c = reinterpret_cast<float*>(acc);\n"
        f"{a_cast}"
        f'  asm volatile("{ptx}"\n'
        f"               : {outs}\n"
        f'               : {a_in}, "l"(b_desc), "r"(e), {scale_in});\n'
        "}\n#endif\n"
    )


# TVM's CUDA codegen keeps a 32-byte float32x8 / int32x8 value in a ``ulonglong4`` and prints a broadcast of one
# as ``make_ulonglong4`` of its eight 32-bit lanes, which CUDA's 4-argument function does not take.
_WIDE_BROADCAST = "".join(
    f"""
__device__ __forceinline__ ulonglong4 make_ulonglong4({", ".join(f"{t} v{i}" for i in range(8))}) {{
  ulonglong4 r;
  {t}* lanes = reinterpret_cast<{t}*>(&r);
  {" ".join(f"lanes[{i}] = v{i};" for i in range(8))}
  return r;
}}""" for t in ("float", "int", "unsigned")) + "\n"
_WIDE_BROADCAST_CALL = re.compile(r"make_ulonglong4\((?:[^,()]*(?:\([^()]*\))?[^,()]*,){7}")


def header_for(source: str) -> str:
    """The intrinsics header with the shape-specific helpers and the dialect helpers
    (`tilelang_cuda.intrinsics.device`) that `source` calls."""
    wanted = sorted({(int(n), ab) for n, ab in _WGMMA_NAME.findall(source)})
    wanted_ss = sorted({(int(n), ab, int(ta), int(tb)) for n, ab, ta, tb in _WGMMA_SS_NAME.findall(source)})
    wanted_rs = sorted({(int(n), ab, int(tb)) for n, ab, tb in _WGMMA_RS_NAME.findall(source)})
    wanted_sd = sorted({(int(n), ab, int(ta), int(tb)) for n, ab, ta, tb in _WGMMA_SD_NAME.findall(source)})
    wanted_fp8 = sorted({(int(n), a, b) for n, a, b in _WGMMA_SS_FP8_NAME.findall(source)})
    wanted_sp = sorted({(int(n), ab) for n, ab in _WGMMA_SP_NAME.findall(source)})
    wanted_sp += sorted({(int(n), ab, form, int(ta), int(tb))
                         for form, n, ab, ta, tb in _WGMMA_SP_FORM_NAME.findall(source)})
    from tilelang_cuda.intrinsics.device import snippets_for
    from tilelang_cuda.intrinsics.mma_sync import helpers_for

    return (_COMMON + _HOPPER + "".join(wgmma_helper(n, ab) for n, ab in wanted)
            + "".join(wgmma_helper(*w) for w in wanted_rs) + "".join(wgmma_ss_helper(*w) for w in wanted_ss)
            + "".join(wgmma_ss_scaled_helper(*w) for w in wanted_sd)
            + "".join(wgmma_ss_fp8_helper(*w) for w in wanted_fp8) + "".join(wgmma_sp_helper(*w) for w in wanted_sp)
            + helpers_for(source) + snippets_for(source)
            + (_WIDE_BROADCAST if _WIDE_BROADCAST_CALL.search(source) else "") + _END)


def with_header(source: str) -> str:
    """`source` with the intrinsics header in front (once). Kernels reading swizzled tiles through wgmma
    descriptors get a dynamic pool aligned to 1024 bytes (the 128-byte swizzle repeats every 1024 bytes)."""
    if HEADER_GUARD in source:
        return source
    if "tl_wgmma_desc_sw(" in source:
        source = re.sub(r"extern __shared__ __align__\(\d+\) ", "extern __shared__ __align__(1024) ", source)
    return header_for(source) + "\n" + source
