"""Hopper ``wgmma`` for hand-written kernels: the instruction width (`select_wgmma_inst_n`), the shared-memory
descriptor of an operand tile (`compute_gmma_descriptor`), and the warpgroup emitter `TensorCoreIntrinEmitter`.

A warpgroup (four warps, 128 threads) issues ``wgmma.mma_async.m64nNk16``: A (64 x 16) and B (16 x N) in
shared memory read through descriptors (the SS form), the 64 x N fp32 accumulator in the registers of the
warpgroup with the fragment layout of ``mma.m16n8`` atoms (warp ``w`` holds rows ``16w .. 16w + 15``).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Any

from tilelang.layout import SwizzleMode
from tilelang_cuda.intrinsics.macro.descriptors import analyze
from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter as MMAIntrinEmitter
from tilelang_cuda.intrinsics.macro.mma_macro_generator import _bits, _emit

__all__ = ["TensorCoreIntrinEmitter", "WGMMADescriptorParams", "compute_gmma_descriptor", "select_wgmma_inst_n"]

WGMMA_M = 64
MAX_N = 256


def select_wgmma_inst_n(warp_col_tiles: int) -> int:
    """The widest legal wgmma N (a multiple of 8 up to 256) that tiles `warp_col_tiles` exactly; extents that are
    not multiples of 16 keep ``gcd(warp_col_tiles, 256)``."""
    floor = gcd(warp_col_tiles, MAX_N)
    if warp_col_tiles % 16:
        return floor
    return next((n for n in range(MAX_N, floor, -16) if warp_col_tiles % n == 0), floor)


@dataclass(frozen=True)
class WGMMADescriptorParams:
    """A wgmma operand's descriptor fields: swizzle mode, LBO and SBO (16-byte units), the elements of one
    swizzle atom along MN, the K steps it spans, element bytes, K-major, and the byte offset of a slice origin."""

    swizzle_mode: SwizzleMode
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle_atom_elems: int
    k_atom_size: int
    elems_in_bytes: int
    is_k_major: bool
    slice_byte_offset: Any = 0


def compute_gmma_descriptor(tl_layout: Any, buffer: Any, transposed: bool, micro_size_k: int = 16,
                            region: Any = None) -> WGMMADescriptorParams:
    """The descriptor fields of `buffer` stored through `tl_layout` read as a wgmma operand ``[MN, K]``
    (``[K, MN]`` when `transposed`); `region` restricts it to a slice (see `descriptors.analyze`)."""
    a = analyze(tl_layout, buffer, transposed, region, "WGMMA")
    atom = a.mn_extent if a.swizzle_mode.is_none() else a.swizzle_mode.swizzle_byte_size() * 8 // a.elem_bits
    return WGMMADescriptorParams(a.swizzle_mode, a.leading_byte_offset, a.stride_byte_offset, atom,
                                 max(atom // micro_size_k, 1), a.elem_bits // 8, a.is_k_major, a.slice_byte_offset)


class TensorCoreIntrinEmitter(MMAIntrinEmitter):
    """Warpgroup ``wgmma`` GEMM code (SS form) for one block tile: the M rows split over warpgroups of four warps
    along M (``block_row_warps`` a multiple of 4; ``4 * warp_row_tiles`` rows per warpgroup, a multiple of 64),
    N over ``block_col_warps`` warpgroup columns; instruction N from `select_wgmma_inst_n`."""

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, is_m_first: bool | None = False,
                 thread_var: Any = None):
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, chunk, reduce_k, num_elems_per_byte,
                         is_m_first, thread_var)
        self.wgmma_inst_m = WGMMA_M
        self.wgmma_inst_n = select_wgmma_inst_n(warp_col_tiles)
        self.wgmma_prefix = f"m{WGMMA_M}n{self.wgmma_inst_n}k{self.micro_size_k}"
        self.a_shared_layout = None
        self.b_shared_layout = None

    def _assign_a_shared_layout(self, layout: Any) -> TensorCoreIntrinEmitter:
        self.a_shared_layout = layout
        return self

    def _assign_b_shared_layout(self, layout: Any) -> TensorCoreIntrinEmitter:
        self.b_shared_layout = layout
        return self

    # geometry of one warpgroup
    @property
    def _rows_per_group(self) -> int:
        return 4 * self.warp_row_tiles

    @property
    def _m_atoms(self) -> int:
        return self._rows_per_group // WGMMA_M

    @property
    def _n_atoms(self) -> int:
        return self.warp_col_tiles // self.wgmma_inst_n

    @property
    def accum_regs(self) -> int:
        """Accumulator registers (fp32 values) each thread holds."""
        return self._m_atoms * self._n_atoms * self.wgmma_inst_n // 2

    def _check(self) -> None:
        if self.block_row_warps % 4 or self._rows_per_group % WGMMA_M:
            raise ValueError(f"wgmma tiles need warpgroups of 4 warps along M and 64-row blocks: block_row_warps="
                             f"{self.block_row_warps}, warp_row_tiles={self.warp_row_tiles}")
        if self.a_shared_layout is None or self.b_shared_layout is None:
            raise ValueError("TensorCoreIntrinEmitter.wgmma needs the shared layouts of A and B "
                             "(_assign_a_shared_layout / _assign_b_shared_layout)")

    @staticmethod
    def _ranges(obj: Any) -> list[Any]:
        """One Range per buffer mode of a buffer, region or element operand."""
        import tvm

        from tilelang.ir import region as R

        if R.is_region(obj):
            return list(obj.region)
        if R.is_load(obj):
            shape = R.buffer_shape(obj.source)
            return [tvm.ir.Range.from_min_extent(i, 1) for i in obj.indices[:-2]] + \
                [tvm.ir.Range.from_min_extent(i, e) for i, e in zip(obj.indices[-2:], shape[-2:])]
        return [tvm.ir.Range.from_min_extent(0, e) for e in R.buffer_shape(obj)]

    @staticmethod
    def _tile_offsets(layout: Any, ranges: list[Any]) -> Any:
        """The operand's 2-D layout (element offsets from the slice origin, unswizzled: the descriptor's address
        arithmetic; the hardware applies the swizzle to the absolute address)."""
        from tilelang.layout import cute

        inner = cute.ComposedLayout.from_tilelang(layout).layout
        return cute.restrict(inner, ranges)[1]

    def wgmma(self, A_region: Any, B_region: Any, C_local_buf: Any, clear_accum: Any = False,
              wg_wait: int = 0) -> None:
        """``C (+)= A @ B`` over the K of the shared tiles: one ``wgmma`` per 64-row block, N block and K step,
        issued by every warpgroup and committed as one batch, then ``wgmma.wait_group wg_wait`` (-1: none).
        With `clear_accum` (a bool or a runtime condition) the first K step overwrites the accumulators."""
        from tvm import tirx

        from tilelang.language import access_ptr
        from tilelang_cuda.language.api import warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait
        from tilelang_cuda.language.tir import ptx_wgmma_ss

        self._check()
        a_buf, a_mins = self._region(A_region)
        b_buf, b_mins = self._region(B_region)
        a_ranges, b_ranges = self._ranges(A_region), self._ranges(B_region)
        a = compute_gmma_descriptor(self.a_shared_layout, a_buf, self.a_transposed, self.micro_size_k, a_ranges)
        b = compute_gmma_descriptor(self.b_shared_layout, b_buf, not self.b_transposed, self.micro_size_k, b_ranges)
        a_tile = self._tile_offsets(self.a_shared_layout, a_ranges)
        b_tile = self._tile_offsets(self.b_shared_layout, b_ranges)
        elem = _bits(self.a_dtype) // 8
        group = self.get_thread_binding() // 128
        groups_m = self.block_row_warps // 4
        group_m, group_n = group % groups_m, group // groups_m
        # the async proxy reads the tiles (ordered by mbarriers / wgmma waits): the pointers record no access
        a_desc = self._desc(access_ptr(tirx.BufferLoad(a_buf, a_mins), 0), a)
        b_desc = self._desc(access_ptr(tirx.BufferLoad(b_buf, b_mins), 0), b)
        regs = self.wgmma_inst_n // 2
        _emit(warpgroup_arrive())
        for mb in range(self._m_atoms):
            for nb in range(self._n_atoms):
                for ki in range(self.chunk // self.micro_size_k):
                    m0 = group_m * self._rows_per_group + mb * WGMMA_M
                    n0 = group_n * self.warp_col_tiles + nb * self.wgmma_inst_n
                    k0 = ki * self.micro_size_k
                    a_off = a_tile((k0, m0) if self.a_transposed else (m0, k0)) * elem // 16
                    b_off = b_tile((n0, k0) if self.b_transposed else (k0, n0)) * elem // 16
                    if ki:
                        scale: Any = 1
                    elif isinstance(clear_accum, bool):
                        scale = 0 if clear_accum else 1
                    else:
                        scale = 1 - tirx.Cast("int32", clear_accum)
                    _emit(ptx_wgmma_ss(self.accum_dtype, self.wgmma_prefix, a.is_k_major, b.is_k_major,
                                       self.a_dtype_abbrv, self.b_dtype_abbrv, self.accum_dtype_abbrv, a_desc, a_off,
                                       b_desc, b_off, C_local_buf, (mb * self._n_atoms + nb) * regs, scale))
        _emit(warpgroup_commit_batch())
        if wg_wait >= 0:
            _emit(warpgroup_wait(wg_wait))

    @staticmethod
    def _desc(ptr: Any, params: WGMMADescriptorParams) -> Any:
        from tvm import tirx

        return tirx.call_extern("uint64", "tl_wgmma_desc_user", ptr, params.leading_byte_offset * 16,
                                params.stride_byte_offset * 16, params.swizzle_mode.wgmma_layout_type())

    def stmatrix(self, C_local_buf: Any, C_buf: Any, pid_m: Any = None, pid_n: Any = None) -> None:
        """Write the warpgroup accumulators to the 2-D tile `C_buf` (of the block, or with `pid_m` / `pid_n` the
        global matrix at that block): thread ``t`` of a warpgroup holds rows ``16 * (t // 32) + (t % 32) // 4``
        (+8) and column pairs ``2 * (t % 4)`` of each 8-column group."""
        from tvm import tirx

        from tilelang.ir import region as R

        tid = self.get_thread_binding()
        group, t = tid // 128, tid % 128
        group_m = group % (self.block_row_warps // 4)
        group_n = group // (self.block_row_warps // 4)
        warp, lane = t // 32, t % 32
        regs = self.wgmma_inst_n // 2
        dt = R.buffer_dtype(C_buf)
        for mb in range(self._m_atoms):
            for nb in range(self._n_atoms):
                for i in range(regs):
                    row = group_m * self._rows_per_group + mb * WGMMA_M + 16 * warp + lane // 4 + 8 * ((i % 4) // 2)
                    col = group_n * self.warp_col_tiles + nb * self.wgmma_inst_n + 8 * (i // 4) + 2 * (lane % 4) + i % 2
                    if pid_m is not None and pid_n is not None:
                        row = pid_m * self.block_row_warps * self.warp_row_tiles + row
                        col = pid_n * self.block_col_warps * self.warp_col_tiles + col
                    src = tirx.BufferLoad(C_local_buf, [tirx.IntImm("int32", (mb * self._n_atoms + nb) * regs + i)])
                    _emit(tirx.BufferStore(C_buf, src if str(src.ty.dtype) == dt else tirx.Cast(dt, src), [row, col]))
