"""``mma.sync`` helpers of any shape and type combination the PTX ISA has, generated for the ones a source calls.

``tl_mma_sync_<shape>_<A>_<B>_<C>(c, a, b)``: the accumulator registers at `c` += A fragment at `a` times B
fragment at `b` (register counts from the shape: ``M*K*bits(A) / 1024`` 32-bit registers of A per thread, and
so on). The four most used combinations keep their hand-written names in ``tilelang_cuda/mma.cuh``
(``tl_mma_f16_f32`` ...), beside ``tl_ldmatrix_x1/x2/x4[_trans]`` and ``tl_mma_store_16x16`` (a warp's 16x16
accumulator tile, two m16n8 atoms, to memory).
"""

from __future__ import annotations

import re

# abbreviation (the reference's emitters) -> (PTX type, bits)
TYPES = {"fp16": ("f16", 16), "bf16": ("bf16", 16), "fp32": ("f32", 32), "tf32": ("tf32", 32), "fp64": ("f64", 64),
         "int8": ("s8", 8), "uint8": ("u8", 8), "int4": ("s4", 4), "uint4": ("u4", 4), "int32": ("s32", 32),
         "e4m3": ("e4m3", 8), "e5m2": ("e5m2", 8)}
SHAPES = {"m8n8k4": (8, 8, 4), "m16n8k8": (16, 8, 8), "m16n8k16": (16, 8, 16), "m16n8k32": (16, 8, 32),
          "m8n8k16": (8, 8, 16), "m8n8k32": (8, 8, 32), "m16n8k4": (16, 8, 4), "m16n8k64": (16, 8, 64)}
_NAME = re.compile(r"\btl_mma_sync_(m\d+n\d+k\d+)_([a-z0-9]+)_([a-z0-9]+)_([a-z0-9]+)\b")


def helper_name(shape: str, a: str, b: str, c: str) -> str:
    """The helper for one combination (ValueError for a shape or type the PTX ISA lacks here)."""
    if shape not in SHAPES:
        raise ValueError(f"mma.sync shape {shape!r} is not one of {', '.join(SHAPES)}")
    for t in (a, b, c):
        if t not in TYPES:
            raise ValueError(f"mma.sync type {t!r} is not one of {', '.join(TYPES)}")
    if TYPES[c][0] not in ("f16", "f32", "s32", "f64"):
        raise ValueError(f"mma.sync accumulates in f16, f32, s32 or f64, not {c}")
    return f"tl_mma_sync_{shape}_{a}_{b}_{c}"


def _operand(count_bits: int, t: str) -> tuple[int, str, str]:
    """(registers, constraint, C type) of an operand holding `count_bits` bits per thread."""
    if TYPES[t][0] == "f64":
        return count_bits // 64, "d", "double"
    return max(1, count_bits // 32), "r", "unsigned"


def mma_helper(shape: str, a: str, b: str, c: str) -> str:
    m, n, k = SHAPES[shape]
    na, ca, ta = _operand(m * k * TYPES[a][1] // 32, a)
    nb, cb, tb = _operand(n * k * TYPES[b][1] // 32, b)
    c_ptx = TYPES[c][0]
    if c_ptx == "f32":
        nc, cc, tc = m * n // 32, "f", "float"
    elif c_ptx == "s32":
        nc, cc, tc = m * n // 32, "r", "int"
    elif c_ptx == "f64":
        nc, cc, tc = m * n // 32, "d", "double"
    else:  # f16 pairs
        nc, cc, tc = m * n // 64, "r", "unsigned"
    regs = list(range(nc + na + nb))
    cs = ", ".join(f"%{i}" for i in regs[:nc])
    as_ = ", ".join(f"%{i}" for i in regs[nc:nc + na])
    bs = ", ".join(f"%{i}" for i in regs[nc + na:])
    ptx = (f"mma.sync.aligned.{shape}.row.col.{c_ptx}.{TYPES[a][0]}.{TYPES[b][0]}.{c_ptx} "
           f"{{{cs}}}, {{{as_}}}, {{{bs}}}, {{{cs}}};\\n")
    outs = ", ".join(f'"+{cc}"(C[{i}])' for i in range(nc))
    ins = ", ".join([*(f'"{ca}"(A[{i}])' for i in range(na)), *(f'"{cb}"(B[{i}])' for i in range(nb))])
    name = helper_name(shape, a, b, c)
    return (f"__device__ __forceinline__ void {name}(void* acc, const void* a, const void* b) {{\n"
            f"  {tc}* C = reinterpret_cast<{tc}*>(acc);\n"
            f"  const {ta}* A = reinterpret_cast<const {ta}*>(a);\n"
            f"  const {tb}* B = reinterpret_cast<const {tb}*>(b);\n"
            f'  asm volatile("{ptx}" : {outs} : {ins});\n}}\n')


# block-scaled mma.sync (sm_120a): kind -> (shape, A / B PTX type, scale type) it is emitted for
_BLOCK_SCALE_NAME = re.compile(r"\btl_mma_block_scale_(m\d+n\d+k\d+)_(mxf4nvf4)_(\d)x_([a-z0-9]+)_([a-z0-9]+)_"
                               r"([a-z0-9]+)\b")
BLOCK_SCALE_FORMS = {("m16n8k64", "mxf4nvf4", 4, "e2m1", "e2m1", "ue4m3")}


def block_scale_helper_name(shape: str, kind: str, scale_vec: int, a: str, b: str, stype: str) -> str:
    """The block-scaled helper of one form (ValueError for a form not emitted here)."""
    form = (shape, kind, int(scale_vec), a, b, stype)
    if form not in BLOCK_SCALE_FORMS:
        raise ValueError(f"block-scaled mma.sync {shape} kind::{kind} scale_vec::{scale_vec}X {a} x {b} ({stype}) "
                         f"is not emitted; forms: {sorted(BLOCK_SCALE_FORMS)}")
    return f"tl_mma_block_scale_{shape}_{kind}_{scale_vec}x_{a}_{b}_{stype}"


def block_scale_helper(shape: str, kind: str, scale_vec: str, a: str, b: str, stype: str) -> str:
    """``acc`` (4 f32) += A (4 regs) * B (2 regs), scaled by the selected lanes' words `sfa` / `sfb`."""
    name = block_scale_helper_name(shape, kind, int(scale_vec), a, b, stype)
    ptx = (f"mma.sync.aligned.{shape}.row.col.kind::{kind}.block_scale.scale_vec::{scale_vec}X.f32.{a}.{b}.f32."
           f"{stype} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}}, {{%10}}, "
           f"{{%11, %12}}, {{%13}}, {{%14, %15}};\\n")
    return (f"__device__ __forceinline__ void {name}(void* acc, const void* a, const void* b, unsigned sfa, "
            "unsigned sfb, unsigned short byte_a, unsigned short thread_a, unsigned short byte_b, "
            "unsigned short thread_b) {\n"
            "  float* C = reinterpret_cast<float*>(acc);\n"
            "  const unsigned* A = reinterpret_cast<const unsigned*>(a);\n"
            "  const unsigned* B = reinterpret_cast<const unsigned*>(b);\n"
            f'  asm volatile("{ptx}"\n'
            '               : "+f"(C[0]), "+f"(C[1]), "+f"(C[2]), "+f"(C[3])\n'
            '               : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(sfa), '
            '"h"(byte_a), "h"(thread_a), "r"(sfb), "h"(byte_b), "h"(thread_b));\n}\n')


def helpers_for(source: str) -> str:
    """The generated mma.sync and block-scaled mma helpers `source` calls."""
    out = [mma_helper(*m) for m in sorted(set(_NAME.findall(source)))]
    out += [block_scale_helper(*m) for m in sorted(set(_BLOCK_SCALE_NAME.findall(source)))]
    return "".join(out)
