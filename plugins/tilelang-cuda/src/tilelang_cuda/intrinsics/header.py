"""The helper prologue of every generated CUDA kernel.

Lowering emits ``call_extern("tl_...", ...)`` on device helpers (tensor-core MMA, ldmatrix, cp.async, warp
shuffles, float atomics, the CUDA dialect's mbarriers / TMA / tcgen05 ...). Their definitions are the plugin's
headers ``tilelang_cuda/<topic>.cuh`` (`tilelang_cuda.intrinsics.device`); `with_header` puts in front of TVM's
CUDA source the ``#include`` lines of the headers the source calls into, then the helpers generated for the shapes
it uses (wgmma's accumulator lists, the mma.sync shapes and types of `tilelang_cuda.intrinsics.mma_sync`), all
inside the ``TILELANG_CUDA_INTRINSICS`` guard. Compiling such a source needs ``-I`` `include_dir` (nvcc and NVRTC
get it from `tilelang_cuda.compiler` and `tilelang_cuda.contrib`).
"""

from __future__ import annotations

import re

HEADER_GUARD = "TILELANG_CUDA_INTRINSICS"

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
    """The helper prologue of `source`: the ``#include`` lines of the helper headers it calls into
    (`tilelang_cuda.intrinsics.device.headers_for`) and the shape-specific helpers it uses, in the header guard."""
    wanted = sorted({(int(n), ab) for n, ab in _WGMMA_NAME.findall(source)})
    wanted_ss = sorted({(int(n), ab, int(ta), int(tb)) for n, ab, ta, tb in _WGMMA_SS_NAME.findall(source)})
    wanted_rs = sorted({(int(n), ab, int(tb)) for n, ab, tb in _WGMMA_RS_NAME.findall(source)})
    wanted_sd = sorted({(int(n), ab, int(ta), int(tb)) for n, ab, ta, tb in _WGMMA_SD_NAME.findall(source)})
    wanted_fp8 = sorted({(int(n), a, b) for n, a, b in _WGMMA_SS_FP8_NAME.findall(source)})
    wanted_sp = sorted({(int(n), ab) for n, ab in _WGMMA_SP_NAME.findall(source)})
    wanted_sp += sorted({(int(n), ab, form, int(ta), int(tb))
                         for form, n, ab, ta, tb in _WGMMA_SP_FORM_NAME.findall(source)})
    from tilelang_cuda.intrinsics.device import includes_for
    from tilelang_cuda.intrinsics.mma_sync import helpers_for

    return (f"#ifndef {HEADER_GUARD}\n#define {HEADER_GUARD}\n" + includes_for(source)
            + "".join(wgmma_helper(n, ab) for n, ab in wanted)
            + "".join(wgmma_helper(*w) for w in wanted_rs) + "".join(wgmma_ss_helper(*w) for w in wanted_ss)
            + "".join(wgmma_ss_scaled_helper(*w) for w in wanted_sd)
            + "".join(wgmma_ss_fp8_helper(*w) for w in wanted_fp8) + "".join(wgmma_sp_helper(*w) for w in wanted_sp)
            + helpers_for(source)
            + (_WIDE_BROADCAST if _WIDE_BROADCAST_CALL.search(source) else "") + _END)


def with_header(source: str) -> str:
    """`source` with its helper prologue (`header_for`) in front (once). Kernels reading swizzled tiles through wgmma
    descriptors get a dynamic pool aligned to 1024 bytes (the 128-byte swizzle repeats every 1024 bytes)."""
    if HEADER_GUARD in source:
        return source
    if "tl_wgmma_desc_sw(" in source:
        source = re.sub(r"extern __shared__ __align__\(\d+\) ", "extern __shared__ __align__(1024) ", source)
    return header_for(source) + "\n" + source
