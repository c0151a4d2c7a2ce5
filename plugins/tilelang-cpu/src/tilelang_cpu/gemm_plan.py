"""How a CPU ``tl.gemm`` is blocked on a given vector ISA: micro-tile, packing, K step.

The defaults come from the target's `VectorISA` (register width and count), not from the CPU's vendor or name;
pass configs override them per compile, and being pass configs they are part of the kernel cache key:

=============================  ========================================================================
``tl.cpu.gemm_micro_tile``     ``"MRxNR"`` rows x columns of C held in vector registers (NR a multiple of
                               the vector lanes), e.g. ``"6x16"``; default: `micro_shape` for the ISA
``tl.cpu.gemm_pack_b``         copy fp32 B into contiguous ``K x NR`` column panels (bool)
``tl.cpu.gemm_pack_a``         copy A into contiguous ``MR x K`` row strips, k-major (bool)
``tl.cpu.gemm_k_block``        K per gemm call after `MergeGemmKSteps` merges the K loop's steps (int)
``tl.cpu.gemm_prefetch``       prefetch the next K step's B tile during the micro-kernel (bool, default true)
``tl.cpu.elide_copies``        run `ElideTileCopies` (bool, default true)
=============================  ========================================================================
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tilelang_cpu.isa import VectorISA

MICRO_TILE = "tl.cpu.gemm_micro_tile"
PACK_A = "tl.cpu.gemm_pack_a"
PACK_B = "tl.cpu.gemm_pack_b"
K_BLOCK = "tl.cpu.gemm_k_block"
PREFETCH = "tl.cpu.gemm_prefetch"
ELIDE_COPIES = "tl.cpu.elide_copies"


class MicroShape(NamedTuple):
    """Register blocking of the micro-kernel: ``mr`` rows x ``nr`` columns of C held in vector registers."""

    mr: int
    nr: int


class GemmPlan(NamedTuple):
    """The blocking of one gemm call: micro tile, and which operands are packed first."""

    mr: int
    nr: int
    pack_a: bool
    pack_b: bool


def _config(key: str, default: Any) -> Any:
    from tilelang.transform.config import current_tl_config

    value = current_tl_config(key, None)
    return default if value is None else value


def micro_shape(m: int, n: int, lanes: int, regs: int) -> MicroShape:
    """The micro tile for an ``m x n`` C tile: up to 4 vectors wide, as many rows as the registers allow."""
    vectors = max(1, min(4, -(-n // lanes)))
    if regs <= 16:
        vectors = min(vectors, 2)
    rows = max(1, min(12, (regs - vectors - 1) // vectors, m))
    return MicroShape(rows, vectors * lanes)


def parse_micro_tile(text: str, lanes: int) -> MicroShape:
    """``"MRxNR"`` as a `MicroShape`; NR must be a multiple of `lanes`."""
    try:
        mr, nr = (int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ValueError(f"{MICRO_TILE} must read 'MRxNR' (e.g. '6x16'), got {text!r}") from None
    if mr < 1 or nr < 1 or nr % lanes:
        raise ValueError(f"{MICRO_TILE}={text!r}: MR >= 1 and NR a positive multiple of the {lanes} vector "
                         f"lanes are required")
    return MicroShape(mr, nr)


def pack_b_default(isa: VectorISA) -> bool:
    """Whether fp32 B is packed into panels by default on `isa` (transposed / half B always are)."""
    return isa.name != "scalar"


def k_block(isa: VectorISA) -> int:
    """K per merged gemm step on `isa` (`tl.cpu.gemm_k_block` overrides)."""
    return int(_config(K_BLOCK, 256))


def packs_b(isa: VectorISA, trans_b: bool, dtype_b: str) -> bool:
    """Whether the micro-kernel copies B into panels (so B may be read in place from global memory)."""
    return trans_b or dtype_b != "float32" or bool(_config(PACK_B, pack_b_default(isa)))


def b_in_place(isa: VectorISA, trans_b: bool, dtype_b: str) -> bool:
    """Whether gemm operand B may be read straight from global memory (EXPERIMENT)."""
    return packs_b(isa, trans_b, dtype_b) or bool(_config("tl.cpu.gemm_b_in_place", False))


def gemm_plan(isa: VectorISA, m: int, n: int, k: int, dtype_a: str, dtype_b: str, trans_b: bool) -> GemmPlan:
    """The plan for one ``m x n x k`` gemm call on `isa` (pass configs of the module docstring applied)."""
    lanes = isa.lanes(32)
    text = _config(MICRO_TILE, None)
    shape = parse_micro_tile(text, lanes) if text else micro_shape(m, n, lanes, isa.registers)
    mr = min(shape.mr, m)
    pack_b = packs_b(isa, trans_b, dtype_b) and (trans_b or dtype_b != "float32" or (m > mr and n > 1))
    pack_a = dtype_a != "float32" or bool(_config(PACK_A, False))
    return GemmPlan(mr, shape.nr, pack_a, pack_b)
