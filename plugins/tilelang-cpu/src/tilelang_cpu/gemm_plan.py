"""How a CPU ``tl.gemm`` is blocked on a given vector ISA: micro-tile, packing, K step; every ``tl.cpu.*`` config.

The defaults come from the target's `VectorISA` (register width and count), never from the CPU's vendor or name.
Pass configs override them per compile (``tilelang.compile(..., pass_configs={...})``); being pass configs, they
are part of the kernel cache key:

=============================  ========================================================================
``tl.cpu.gemm_micro_tile``     ``"MRxNR"``: rows x columns of C held in vector registers; NR is 1, 2, 4 or
                               8 vectors (e.g. ``"6x16"``); default `micro_shape` of the ISA
``tl.cpu.gemm_pack_b``         read fp32 B from ``K x NR`` column panels (default true; transposed or
                               half-precision B always are)
``tl.cpu.gemm_k_block``        K per gemm call once `MergeGemmKSteps` merged the K loop's steps (int;
                               default `k_block` of the ISA; 1 keeps the program's steps)
``tl.cpu.gemm_prepack_limit``  bytes up to which B (and a half-precision A) is packed once per call before
                               the block grid (`tilelang_cpu.gemm_prepack`; default 64 MiB; 0: never)
``tl.cpu.gemm_prefetch``       software prefetches in the micro-kernel (`tilelang_cpu.gemm_prefetch`;
                               default true)
``tl.cpu.elide_copies``        run `ElideTileCopies` (default true)
``tl.cpu.row_streaming``       stream whole rows of blocks through the thread pool (`tilelang_cpu.passes.lower_launch`;
                               default true; false: one block per work item)
``tl.cpu.fast_exp``            float32 ``exp`` / ``exp2`` as vectorisable polynomials
                               (`tilelang_cpu.passes.vector_exp`; default true; false: libm calls)
``tl.cpu.vector_reduce``       row reductions with vector partial sums (`tilelang_cpu.tileops.reduce`; default
                               true; false: the generic lowering)
``tl.cpu.gemm_avx512_bf16``    bf16 GEMMs on AVX512-BF16 without AMX through ``vdpbf16ps`` (default true where
                               the target has it; false: the fp32 micro-kernel, faster on Intel CPUs that issue
                               ``vdpbf16ps`` at half the FMA rate)
=============================  ========================================================================
"""

from __future__ import annotations

import difflib
from typing import Any, NamedTuple

from tilelang_cpu.isa import VectorISA

MICRO_TILE = "tl.cpu.gemm_micro_tile"
PACK_B = "tl.cpu.gemm_pack_b"
K_BLOCK = "tl.cpu.gemm_k_block"
PREPACK_LIMIT = "tl.cpu.gemm_prepack_limit"
PREFETCH = "tl.cpu.gemm_prefetch"
ELIDE_COPIES = "tl.cpu.elide_copies"
ROW_STREAMING = "tl.cpu.row_streaming"
FAST_EXP = "tl.cpu.fast_exp"
VECTOR_REDUCE = "tl.cpu.vector_reduce"
AVX512_BF16 = "tl.cpu.gemm_avx512_bf16"
CONFIG_KEYS = (MICRO_TILE, PACK_B, K_BLOCK, PREPACK_LIMIT, PREFETCH, ELIDE_COPIES, ROW_STREAMING, FAST_EXP,
               VECTOR_REDUCE, AVX512_BF16)
_B_SLICE_BYTES = 64 << 10  # a K-step slice of one B panel: half of a small (512 KiB) L2's share per core
TILE_K_BLOCK = 2048  # K per gemm call on AMX tiles: a block's A and B slices (128 x 2048 x 2 bytes each) stay in L2


class MicroShape(NamedTuple):
    """Register blocking of the micro-kernel: ``mr`` rows x ``nr`` columns of C held in vector registers."""

    mr: int
    nr: int


class GemmPlan(NamedTuple):
    """The blocking of one gemm call: micro tile, and which operands are copied to fp32 tiles first."""

    mr: int
    nr: int
    pack_a: bool
    pack_b: bool


def config(key: str, default: Any) -> Any:
    """The value of pass config `key` in the compile being run (`default` when unset)."""
    from tilelang.backend.sdk import current_tl_config

    value = current_tl_config(key, None)
    return default if value is None else value


def check_configs() -> None:
    """Raise for a ``tl.cpu.*`` pass config of the current compile that this backend does not know."""
    from tilelang.backend.sdk import current_tl_configs

    for key in current_tl_configs():
        if str(key).startswith("tl.cpu.") and key not in CONFIG_KEYS:
            close = difflib.get_close_matches(key, CONFIG_KEYS, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown CPU pass config {key!r}{hint} (known: {', '.join(CONFIG_KEYS)})")


def micro_shape(m: int, n: int, lanes: int, regs: int) -> MicroShape:
    """The micro tile for an ``m x n`` C tile: up to 4 vectors wide (2 with 16 registers), as many rows as the
    registers left after one row of B and a broadcast of A allow."""
    vectors = max(1, min(4, -(-n // lanes)))
    if regs <= 16:
        vectors = min(vectors, 2)
    rows = max(1, min(12, (regs - vectors - 1) // vectors, m))
    return MicroShape(rows, vectors * lanes)


def parse_micro_tile(text: str, isa: VectorISA) -> MicroShape:
    """``"MRxNR"`` as a `MicroShape`, checked against `isa` (NR of 1, 2, 4 or 8 vectors; the accumulators plus
    one row of B and a broadcast must fit the vector registers)."""
    lanes = isa.lanes(32)
    try:
        mr, nr = (int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ValueError(f"{MICRO_TILE} must read 'MRxNR' (e.g. '6x16'), got {text!r}") from None
    vectors = nr // lanes if nr % lanes == 0 else 0
    if mr < 1 or vectors not in (1, 2, 4, 8):
        raise ValueError(f"{MICRO_TILE}={text!r}: NR must be 1, 2, 4 or 8 vectors of {lanes} fp32 lanes "
                         f"({isa.name}), MR at least 1")
    if (mr + 1) * vectors + 1 > isa.registers:
        raise ValueError(f"{MICRO_TILE}={text!r} needs {(mr + 1) * vectors + 1} vector registers; {isa.name} has "
                         f"{isa.registers}")
    return MicroShape(mr, nr)


def k_block(isa: VectorISA, tiles: bool = False, b_bytes: int = 4) -> int:
    """K per merged gemm step on `isa`: a ``K x NR`` slice of one B panel (NR of the ISA's widest micro tile) of
    about 64 KiB, between 128 and 512 -- 256 on AVX-512, 512 on AVX2 and NEON; int8 B (`b_bytes` 1, a
    ``vpdpbusd`` / ``vpdpbssd`` micro tile) takes four times that K, the same bytes of B (C is loaded and stored
    a quarter as often; measured 4-7 % faster on Zen 4 at 1024^3 and 4096x4096x1024); a gemm on AMX `tiles`
    (its C tiles stay in tile registers over the call's whole K, and its prefetches of the output cover it
    once) takes `TILE_K_BLOCK`. `tl.cpu.gemm_k_block` overrides all."""
    nr = isa.lanes(32) * (4 if isa.registers >= 32 else 2)
    default = max(128, min(512, _B_SLICE_BYTES // (4 * nr))) * (4 if b_bytes == 1 else 1)
    return int(config(K_BLOCK, TILE_K_BLOCK if tiles else default))


def packs_b(isa: VectorISA, trans_b: bool, dtype_b: str) -> bool:
    """Whether the micro-kernel reads B from its own panels (so B may be read in place from global memory)."""
    return trans_b or dtype_b != "float32" or (isa.name != "scalar" and bool(config(PACK_B, True)))


def gemm_plan(isa: VectorISA, m: int, n: int, k: int, dtype_a: str, dtype_b: str, trans_b: bool) -> GemmPlan:
    """The plan for one ``m x n x k`` gemm call on `isa` (pass configs of the module docstring applied)."""
    text = config(MICRO_TILE, None)
    shape = parse_micro_tile(text, isa) if text and isa.name != "scalar" else micro_shape(m, n, isa.lanes(32),
                                                                                           isa.registers)
    mr = min(shape.mr, m)
    # an fp32 B read by a single row strip is used once: packing it would only add a copy
    pack_b = packs_b(isa, trans_b, dtype_b) and (trans_b or dtype_b != "float32" or m > mr)
    return GemmPlan(mr, shape.nr, dtype_a != "float32", pack_b)
