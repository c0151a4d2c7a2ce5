"""Hopper warpgroup MMA (``wgmma.mma_async``) with shared-memory matrix descriptors on the CuTe DSL.

A `GmmaDescriptor` is the 64-bit wgmma matrix descriptor held in two 32-bit registers: bits 0-13 the shared
address >> 4, 16-29 the leading-dimension byte offset >> 4, 32-45 the stride byte offset >> 4, 62-63 the
swizzle (layout type). ``wgmma_ss`` reads A and B through descriptors, ``wgmma_rs`` A from registers; both
accumulate into the warpgroup's registers at `C_ptr` (M x N / 128 values per thread).
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl.typing import Int32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, smem_addr

_PTX = {"fp16": "f16", "float16": "f16", "f16": "f16", "bf16": "bf16", "bfloat16": "bf16", "tf32": "tf32",
        "fp32": "tf32", "float32": "tf32", "f32": "tf32", "e4m3": "e4m3", "float8_e4m3": "e4m3",
        "float8_e4m3fn": "e4m3", "e5m2": "e5m2", "float8_e5m2": "e5m2", "s8": "s8", "int8": "s8", "u8": "u8",
        "uint8": "u8"}
_ACC = {"fp32": "f32", "float32": "f32", "f32": "f32", "fp16": "f16", "float16": "f16", "f16": "f16",
        "int32": "s32", "s32": "s32"}
_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}


class GmmaDescriptor:
    """A wgmma matrix descriptor in two 32-bit registers (``desc[0]`` low word, ``desc[1]`` high word);
    `desc_64` initialises it from a 64-bit value."""

    def __init__(self, desc_64=None):
        self.desc = cute.make_rmem_tensor(cute.make_layout(2), cutlass.Int32)
        self.desc_i64 = cute.make_tensor(cute.recast_ptr(self.desc.iterator, dtype=cutlass.Int64),
                                         cute.make_layout(1))
        if desc_64 is not None:
            self.desc_i64[0] = cutlass.Int64(desc_64)

    def __add__(self, offset):
        """A copy whose start address is `offset` 16-byte units further (``GmmaDescriptor::operator+``)."""
        out = GmmaDescriptor()
        out.desc[0] = self.desc[0] + Int32(offset)
        out.desc[1] = self.desc[1]
        return out

    def value(self):
        """The descriptor as one 64-bit value."""
        return self.desc_i64[0]


def _field(name, value, bits):
    if isinstance(value, int) and not 0 <= value < (1 << bits):
        raise ValueError(f"wgmma descriptor: {name} {value} does not fit {bits} bits (pass it in 16-byte units)")
    return Int32(value)


def initialize_wgmma_descriptor(layout_type, leading_byte_offset, stride_byte_offset, desc, start_address):
    """Fill `desc` for the shared-memory matrix at `start_address`: swizzle `layout_type` (0 none, 1 128B,
    2 64B, 3 32B) and the leading / stride byte offsets, both already in 16-byte units."""
    address = Int32(smem_addr(start_address)) >> 4
    desc.desc[0] = (address & 0x3FFF) | (_field("leading_byte_offset", leading_byte_offset, 14) << 16)
    desc.desc[1] = _field("stride_byte_offset", stride_byte_offset, 14) | (_field("layout_type", layout_type, 2)
                                                                            << 30)


def increase_descriptor_offset(desc, offset):
    """Advance the start address of `desc` by `offset` bytes (a multiple of 16)."""
    desc.desc[0] = desc.desc[0] + (Int32(offset) >> 4)


def warpgroup_fence_operand(*registers):
    """Keep the compiler from moving register accesses across this point (an empty ``asm volatile`` with a memory
    clobber), so accumulators are not touched while a wgmma is in flight."""
    asm(None, [], "", "~{memory}")


def warpgroup_arrive():
    """Order earlier register and shared-memory writes before the next wgmma (``wgmma.fence.sync.aligned``)."""
    cute.nvgpu.warpgroup.fence()


def warpgroup_commit_batch():
    """Close the current group of wgmma operations (``wgmma.commit_group.sync.aligned``)."""
    cute.nvgpu.warpgroup.commit_group()


def warpgroup_wait(N):
    """Wait until at most `N` wgmma groups are pending (``wgmma.wait_group.sync.aligned N``)."""
    cute.nvgpu.warpgroup.wait_group(N)


def _types(a_dtype, b_dtype, c_dtype, M, N, K):
    try:
        a, b, c = _PTX[str(a_dtype).lower()], _PTX[str(b_dtype).lower()], _ACC[str(c_dtype).lower()]
    except KeyError as missing:
        raise ValueError(f"wgmma: unsupported dtype {missing}") from None
    if M != 64 or N % 8 or not 8 <= N <= 256 or K != _K[a]:
        raise ValueError(f"wgmma: shape m{M}n{N}k{K} is not m64nNk{_K[a]} (N a multiple of 8 up to 256) for {a}")
    return a, b, c


def _mma(a, b, c, M, N, K, a_operand, a_count, desc_b, C_ptr, scale_out, scales):
    """One ``wgmma.mma_async``: A from `a_operand` (a descriptor, or `a_count` registers), B from `desc_b`."""
    regs = M * N * (16 if c == "f16" else 32) // (128 * 32)
    kind, con, mlir = (Int32, "r", T.i32()) if c in ("s32", "f16") else (cutlass.Float32, "f", T.f32())
    acc = cute.make_tensor(cute.recast_ptr(C_ptr, dtype=kind), cute.make_layout(regs))
    operands = [kind(acc[i]).ir_value() for i in range(regs)]
    constraints = [f"={con}"] * regs + [str(i) for i in range(regs)]
    if a_count:
        a_regs = cute.make_tensor(cute.recast_ptr(a_operand, dtype=Int32), cute.make_layout(a_count))
        operands += [Int32(a_regs[i]).ir_value() for i in range(a_count)]
        constraints += ["r"] * a_count
        a_text = "{" + ", ".join(f"${regs * 2 + i}" for i in range(a_count)) + "}"
    else:
        operands.append(a_operand.value().ir_value())
        constraints.append("l")
        a_text = f"${regs * 2}"
    first = regs + len(operands)  # asm operands number the outputs first
    operands += [desc_b.value().ir_value(), Int32(scale_out).ir_value()]
    constraints += ["l", "r"]
    d_text = "{" + ", ".join(f"${i}" for i in range(regs)) + "}"
    text = (f"{{ .reg .pred p; setp.ne.b32 p, ${first + 1}, 0; wgmma.mma_async.sync.aligned.m{M}n{N}k{K}.{c}.{a}.{b} "
            f"{d_text}, {a_text}, ${first}, p{scales}; }}")
    out = asm(llvm.StructType.get_literal([mlir] * regs), operands, text, ",".join(constraints))
    for i in range(regs):
        acc[i] = kind(llvm.extractvalue(mlir, out, [i]))


def _scales(a, scale_a, scale_b, transposes):
    """The immediates after the scale-d predicate: none for integers, the input negations (1 or -1) for floats,
    then the transposes where the type allows them (16-bit types only)."""
    if a in ("s8", "u8"):
        return ""
    for scale in (scale_a, scale_b):
        if scale not in (1, -1):
            raise ValueError(f"wgmma: scaleA / scaleB must be 1 or -1, got {scale}")
    text = f", {scale_a}, {scale_b}"
    if a in ("f16", "bf16"):
        text += "".join(f", {int(bool(t))}" for t in transposes)
    elif any(transposes):
        raise ValueError(f"wgmma: {a} operands must be K-major (no transpose)")
    return text


def wgmma_ss(A_dtype, B_dtype, C_dtype, M, N, K, tnspA, tnspB, scaleA, scaleB, desc_a, desc_b, C_ptr,
             scale_out):
    """``C = A @ B (+ C if scale_out)`` for the warpgroup, A and B in shared memory (descriptors); `tnspA` /
    `tnspB` mark MN-major operands (16-bit types only)."""
    a, b, c = _types(A_dtype, B_dtype, C_dtype, M, N, K)
    _mma(a, b, c, M, N, K, desc_a, 0, desc_b, C_ptr, scale_out, _scales(a, scaleA, scaleB, (tnspA, tnspB)))


def wgmma_rs(A_dtype, B_dtype, C_dtype, M, N, K, tnspB, scaleA, scaleB, A_ptr, desc_b, C_ptr,
             scale_out):
    """`wgmma_ss` with A in registers (4 per thread at `A_ptr`, K-major)."""
    a, b, c = _types(A_dtype, B_dtype, C_dtype, M, N, K)
    _mma(a, b, c, M, N, K, A_ptr, 4, desc_b, C_ptr, scale_out, _scales(a, scaleA, scaleB, (tnspB,)))
