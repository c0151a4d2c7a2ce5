"""The AMD matrix instructions `tl.gemm` uses, with the lane layout of each operand.

Every instruction computes a 16x16 tile of ``D = A @ B + C`` for one wavefront; lane ``l`` holds ``a_lanes``
elements of A and of B and ``c_lanes`` of C/D, at the (row, col) positions the layout functions give for
element ``v``. CDNA (gfx90a, gfx942, gfx950): MFMA, wave64. RDNA3 (gfx11xx): WMMA, wave32. fp16 and bf16
operands (bf16 as i16 bit patterns, the intrinsics' operand type) on both, fp32 on CDNA only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Layout = Callable[[Any, int], tuple[Any, Any]]  # (lane, element) -> (row, col)


@dataclass(frozen=True)
class MatrixCore:
    intrinsic: str
    operand_dtype: str
    wave: int
    k: int
    a_lanes: int
    c_lanes: int
    a_at: Layout  # (row in M, col in K)
    b_at: Layout  # (row in K, col in N)
    c_at: Layout  # (row in M, col in N)
    extra_args: tuple[int, ...] = ()
    bits_dtype: str | None = None  # operands travel as these bit patterns (bf16 MFMA/WMMA take i16 vectors)


def _quad(lane: Any) -> Any:
    return lane // 16


MFMA_F16 = MatrixCore(
    "llvm.amdgcn.mfma.f32.16x16x16f16", "float16", wave=64, k=16, a_lanes=4, c_lanes=4,
    a_at=lambda t, v: (t % 16, _quad(t) * 4 + v), b_at=lambda t, v: (_quad(t) * 4 + v, t % 16),
    c_at=lambda t, v: (_quad(t) * 4 + v, t % 16), extra_args=(0, 0, 0))
MFMA_F32 = MatrixCore(
    "llvm.amdgcn.mfma.f32.16x16x4f32", "float32", wave=64, k=4, a_lanes=1, c_lanes=4,
    a_at=lambda t, v: (t % 16, _quad(t)), b_at=lambda t, v: (_quad(t), t % 16),
    c_at=lambda t, v: (_quad(t) * 4 + v, t % 16), extra_args=(0, 0, 0))
MFMA_BF16 = MatrixCore(
    "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", "bfloat16", wave=64, k=16, a_lanes=4, c_lanes=4,
    a_at=MFMA_F16.a_at, b_at=MFMA_F16.b_at, c_at=MFMA_F16.c_at, extra_args=(0, 0, 0), bits_dtype="int16")
WMMA_F16 = MatrixCore(
    "llvm.amdgcn.wmma.f32.16x16x16.f16", "float16", wave=32, k=16, a_lanes=16, c_lanes=8,
    a_at=lambda t, v: (t % 16, v), b_at=lambda t, v: (v, t % 16),
    c_at=lambda t, v: (v * 2 + _quad(t), t % 16))
WMMA_BF16 = MatrixCore(
    "llvm.amdgcn.wmma.f32.16x16x16.bf16", "bfloat16", wave=32, k=16, a_lanes=16, c_lanes=8,
    a_at=WMMA_F16.a_at, b_at=WMMA_F16.b_at, c_at=WMMA_F16.c_at, bits_dtype="int16")

CDNA = ("gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")


def matrix_core(mcpu: str, operand_dtype: str) -> MatrixCore | None:
    """The instruction for `mcpu` and operand dtype (accumulating in fp32), or None."""
    if mcpu in CDNA:
        if operand_dtype == "bfloat16" and mcpu == "gfx908":
            return None  # the bf16 ".1k" MFMA needs gfx90a or later
        return {"float16": MFMA_F16, "float32": MFMA_F32, "bfloat16": MFMA_BF16}.get(operand_dtype)
    if mcpu.startswith("gfx11"):  # RDNA3 has no fp32 WMMA: fp32 gemms take core's FMA lowering
        return {"float16": WMMA_F16, "bfloat16": WMMA_BF16}.get(operand_dtype)
    return None
