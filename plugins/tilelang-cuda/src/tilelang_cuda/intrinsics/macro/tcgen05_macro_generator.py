"""Blackwell ``tcgen05.mma`` for hand-written kernels: the shared-memory descriptor of an operand tile
(`compute_umma_descriptor`), the instruction shape (`TensorCoreIntrinEmitter.get_tcgen5_mma_meta`), the operand
contract (`TensorCoreIntrinEmitter.validate_tcgen05_operand_regions`) and the accumulator's TMEM fragment.

One thread issues each ``tcgen05.mma``: A (M x K) and B (K x N) from shared memory through descriptors (SS) or A
from tensor memory (TS), the accumulator in tensor memory (`tilelang_cuda.intrinsics.layout.mma_sm100_layout`).
Operands are whole instruction atoms: every operand region pins its leading modes to one element, and its two
matrix modes are atom-aligned unions of atoms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.layout import SwizzleMode
from tilelang_cuda.intrinsics.layout.mma_sm100_layout import (
    TCGEN05Meta,
    make_tmem_frg_a,
    make_tmem_frg_c,
    validate_tcgen05_ts_instruction,
)
from tilelang_cuda.intrinsics.macro.descriptors import analyze
from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter as MMAIntrinEmitter
from tilelang_cuda.intrinsics.macro.mma_macro_generator import _bits

__all__ = ["TCGEN05DescriptorParams", "TensorCoreIntrinEmitter", "compute_umma_descriptor"]


@dataclass(frozen=True)
class TCGEN05DescriptorParams:
    """A tcgen05 operand's descriptor fields: swizzle mode, LBO and SBO (16-byte units), the elements of one
    swizzle atom along MN, the K steps it spans, element bits, K-major, the byte offset of a slice origin."""

    swizzle_mode: SwizzleMode
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle_atom_elems: int
    k_atom_size: int
    elem_bits: int
    is_k_major: bool
    slice_byte_offset: Any = 0


def compute_umma_descriptor(tl_layout: Any, buffer: Any, transposed: bool, micro_size_k: int = 16,
                            region: Any = None) -> TCGEN05DescriptorParams:
    """The descriptor fields of `buffer` stored through `tl_layout` read as a tcgen05 operand ``[MN, K]``
    (``[K, MN]`` when `transposed`); `region` restricts it to a slice (see `descriptors.analyze`)."""
    a = analyze(tl_layout, buffer, transposed, region, "UMMA")
    if a.swizzle_mode.is_none():
        atom = a.mn_extent
    else:
        bits = a.swizzle_mode.swizzle_byte_size() * 8
        if bits % a.elem_bits:
            raise ValueError(f"{a.swizzle_mode.swizzle_byte_size()} bytes are not whole {a.elem_bits}-bit elements")
        atom = bits // a.elem_bits
    return TCGEN05DescriptorParams(a.swizzle_mode, a.leading_byte_offset, a.stride_byte_offset, atom,
                                   max(atom // micro_size_k, 1), a.elem_bits, a.is_k_major, a.slice_byte_offset)


def _k_atom(bits: int) -> int:
    """K of one tcgen05.mma: 256 bits of A per row (16 for 16-bit types, 32 for 8-bit, 8 for tf32)."""
    return 32 if bits in (4, 6) else 256 // bits


class TensorCoreIntrinEmitter(MMAIntrinEmitter):
    """tcgen05 GEMM planning for one block tile.

    The tile is ``(block_row_warps * warp_row_tiles) x (block_col_warps * warp_col_tiles)``; `meta` is the
    selected instruction ``(M, N, K, ws, 2cta)`` (`get_tcgen5_mma_meta`)."""

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 1,
                 block_col_warps: int = 1, warp_row_tiles: int = 128, warp_col_tiles: int = 128, chunk: int = 32,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, is_m_first: bool | None = False,
                 thread_var: Any = None):
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, chunk, reduce_k, num_elems_per_byte,
                         is_m_first, thread_var)
        self.meta: tuple[int, ...] = ()

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        bits = _bits(a_dtype)
        if bits in (4, 6) and self.chunk % 32:
            raise ValueError(f"TCGEN5MMA FP{bits} requires chunk to be a multiple of 32, got {self.chunk}")
        self.k_dim = _k_atom(bits) if bits in (4, 6) else min(256 // bits, self.chunk)

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 16) -> None:
        self.micro_size_x, self.micro_size_k = m_dim, k_dim
        self.n_dim = self.micro_size_y = 16 if self.warp_col_tiles % 16 == 0 else 8
        self.warp_rows = max(1, self.warp_row_tiles // m_dim)
        self.warp_cols = max(1, self.warp_col_tiles // self.n_dim)

    # ------------------------------------------------------------------------------------ instruction shape
    def get_tcgen5_mma_meta(self, m: int, n: int, k: int, disable_2cta: bool = True,
                            disable_ws: bool = False) -> tuple[int, int, int, int, int]:
        """The instruction for an ``m x n x k`` block: M 128 (or 64 for a 64-row block), the widest legal N
        (multiple of 16 for M 128, of 8 for M 64, up to 256) dividing `n`, K of one atom. One CTA, not ``.ws``."""
        atom_m = 128 if m % 128 == 0 else 64 if m % 64 == 0 else 0
        if not atom_m:
            raise ValueError(f"tcgen05.mma needs M a multiple of 64, got {m}")
        step = 16 if atom_m == 128 else 8
        atom_n = next((c for c in range(256, step - 1, -step) if n % c == 0), 0)
        if not atom_n:
            raise ValueError(f"tcgen05.mma needs N a multiple of {step}, got {n}")
        atom_k = _k_atom(_bits(self.a_dtype))
        if k % atom_k:
            raise ValueError(f"tcgen05.mma on {self.a_dtype} steps K by {atom_k}; K={k} is not a multiple")
        self.meta = (atom_m, atom_n, atom_k, 0, 0)
        return self.meta  # type: ignore[return-value]

    @property
    def tcgen05_meta(self) -> TCGEN05Meta:
        if len(self.meta) != 5:
            raise AssertionError("TCGEN05 meta not initialized; call get_tcgen5_mma_meta() first")
        return TCGEN05Meta.from_ffi(self.meta)

    @property
    def tcgen05_num_inst_m(self) -> int:
        return self.block_row_warps * self.warp_row_tiles // self.tcgen05_meta.atom_m_per_cta

    @property
    def tcgen05_num_inst_n(self) -> int:
        return self.block_col_warps * self.warp_col_tiles // self.tcgen05_meta.atom_n

    @property
    def tcgen05_num_k_atoms(self) -> int:
        return self.chunk // self.micro_size_k

    def get_tcgen5_instr_desc(self, m: int, n: int, a_is_k_major: bool, b_is_k_major: bool,
                              scale_in_a: int = 1, scale_in_b: int = 1) -> int:
        """The 32-bit instruction descriptor of ``kind::f16`` / ``kind::tf32`` (PTX "Instruction descriptor"):
        D format (bits 4-5: 1 = f32), A / B formats (7-9, 10-12: f16 0, bf16 1; tf32 2), negate A/B (13, 14),
        transpose A / B (15, 16: MN-major), N >> 3 (17-22), M >> 4 (24-28)."""
        formats = {"float16": 0, "bfloat16": 1, "float32": 2}
        if self.a_dtype not in formats or self.b_dtype not in formats:
            raise ValueError(f"tcgen05 kind::f16 / tf32 takes float16, bfloat16 or float32 operands, got "
                             f"{self.a_dtype} x {self.b_dtype}")
        d_fmt = {"float16": 0, "float32": 1}.get(self.accum_dtype)
        if d_fmt is None:
            raise ValueError(f"tcgen05 kind::f16 accumulates in float16 or float32, got {self.accum_dtype}")
        desc = d_fmt << 4 | formats[self.a_dtype] << 7 | formats[self.b_dtype] << 10
        desc |= (0 if scale_in_a > 0 else 1) << 13 | (0 if scale_in_b > 0 else 1) << 14
        desc |= (0 if a_is_k_major else 1) << 15 | (0 if b_is_k_major else 1) << 16
        desc |= (n >> 3) << 17 | (m >> 4) << 24
        return desc

    # ------------------------------------------------------------------------------------ operand contract
    def validate_tcgen05_operand_regions(self, A_region: Any, B_region: Any, C_region: Any, *, is_ts: bool) -> None:
        """AssertionError unless A, B and C are whole, atom-aligned unions of the selected instruction's atoms
        (leading modes pinned to one element)."""
        import tvm

        meta = self.tcgen05_meta
        if is_ts:
            validate_tcgen05_ts_instruction(meta, self.a_dtype, self.a_transposed)
        if meta.enable_2cta and self.tcgen05_num_inst_n != 1:
            raise AssertionError(f"2CTA tcgen05.mma supports one instruction along N; N="
                                 f"{self.block_col_warps * self.warp_col_tiles}, instruction N={meta.atom_n}")
        analyzer = tvm.sym.Analyzer()

        def check(region: Any, operand: str, transposed: bool, mn_atom: int, k_atom: int, mn_name: str,
                  k_name: str) -> None:
            ranges = list(region.region)
            if len(ranges) < 2:
                raise AssertionError(f"tcgen05.mma {operand} needs two matrix modes, has rank {len(ranges)}")
            for axis, r in enumerate(ranges[:-2]):
                if not analyzer.can_prove_equal(r.extent, 1):
                    raise AssertionError(f"tcgen05.mma {operand} leading mode {axis} must have unit extent (the "
                                         "last two modes are the matrix)")
            rows, cols = ranges[-2:]
            mn, k = (cols, rows) if transposed else (rows, cols)
            for name, r, atom in ((mn_name, mn, mn_atom), (k_name, k, k_atom)):
                if not analyzer.can_prove_equal(tvm.tirx.floormod(r.min, atom), 0):
                    raise AssertionError(f"tcgen05.mma {operand} {name} origin {r.min} is not aligned to the "
                                         f"instruction atom {atom}")
                if not analyzer.can_prove_equal(tvm.tirx.floormod(r.extent, atom), 0):
                    raise AssertionError(f"tcgen05.mma {operand} {name} extent {r.extent} is not a multiple of the "
                                         f"instruction atom {atom}")

        check(A_region, "A", self.a_transposed, meta.atom_m_per_cta, meta.atom_k, "M", "K")
        check(B_region, "B", not self.b_transposed, meta.b_atom_n_per_cta, meta.atom_k, "N", "K")
        check(C_region, "C", False, meta.atom_m_per_cta, meta.atom_n, "M", "N")

    # ------------------------------------------------------------------------------------ layouts
    def make_mma_store_layout(self, tmem_buf: Any, *, operand: str = "C", is_ts: bool = False) -> Any:
        """The TileLang layout of a TMEM operand (`operand` ``"C"`` accumulator or ``"A"`` for the TS form)."""
        if operand == "A":
            return make_tmem_frg_a(tmem_buf, self.tcgen05_meta).to_tilelang()
        if operand != "C":
            raise ValueError(f"TMEM operands are A or C, got {operand!r}")
        return make_tmem_frg_c(tmem_buf, self.tcgen05_meta, is_ts=is_ts).to_tilelang()

    def compute_tcgen05_a_desc_params(self, layout: Any, A_buf: Any, region: Any = None) -> TCGEN05DescriptorParams:
        return compute_umma_descriptor(layout, A_buf, self.a_transposed, self.micro_size_k, region)

    def compute_tcgen05_b_desc_params(self, layout: Any, B_buf: Any, region: Any = None) -> TCGEN05DescriptorParams:
        return compute_umma_descriptor(layout, B_buf, not self.b_transposed, self.micro_size_k, region)
