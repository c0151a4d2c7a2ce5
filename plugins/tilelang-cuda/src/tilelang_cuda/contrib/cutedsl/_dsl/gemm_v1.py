"""Tile GEMMs on CuTe's MMA atoms (``tl::gemm_ss`` ...): SM80 ``mma.sync`` fed by ``ldmatrix``, SM90 ``wgmma``.

The operands follow TileLang's conventions: A is M x K (`trans_A`: stored K x M), B is K x N (`trans_B`: stored
N x K, i.e. K-major); shared-memory tiles use the swizzled layouts TileLang's CUDA path gives them (8-row atoms,
64-element rows at most, XOR swizzle on 16-byte chunks); register operands and the accumulator are the
thread's fragments of the tiled MMA, C accumulating in registers.
"""

from __future__ import annotations

import math

import cutlass.cute as cute

try:  # nvidia-cutlass-dsl 4.8 moved these; 4.7 has them in the old places only
    from cutlass.tensor_utils import LayoutEnum
except ImportError:  # pragma: no cover
    from cutlass.utils import LayoutEnum
try:
    from cutlass.cute.nvgpu import OperandMajorMode
except ImportError:  # pragma: no cover
    from cutlass.cute.nvgpu.warpgroup import OperandMajorMode


def make_aligned_tensor(ptr, layout, align_bytes, swizzle=False):
    """A tensor of `layout` at `ptr` assumed aligned to `align_bytes`; with `swizzle` and a composed layout, the
    swizzle moves onto the pointer (as CuTe's shared-memory tensors carry it)."""
    ptr = ptr.align(align_bytes)
    if swizzle and isinstance(layout, cute.ComposedLayout):
        return cute.make_tensor(cute.recast_ptr(ptr, swizzle_=layout.inner, dtype=ptr.dtype), layout.outer)
    return cute.make_tensor(ptr, layout)


def _smem_layout(dtype, k_major, rows, cols):
    """The swizzled shared-memory layout of a `rows` x `cols` tile (`k_major`: `cols` is K and contiguous)."""
    contiguous = cols if k_major else rows
    width = min(64, contiguous)
    bits = max(0, min(3, int(math.log2(max(1, width * dtype.width // 128)))))
    if k_major:
        outer = cute.make_layout((8, width), stride=(width, 1))
    else:
        outer = cute.make_layout((width, 8), stride=(1, width))
    atom = cute.make_composed_layout(cute.make_swizzle(bits, 3, 3), 0, outer)
    return cute.tile_to_shape(atom, (rows, cols), (0, 1) if k_major else (1, 0))


class Gemm_SM80:
    """``C += A @ B`` for an M x N x K tile over `warp_m` x `warp_n` warps with ``mma.sync.m16n8k16``
    (16-bit A and B), shared operands loaded with ``ldmatrix``."""

    def __init__(self, M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B,
                 offset_A, offset_B, A_type, B_type, C_type):
        if A_type.width != 16 or B_type is not A_type:
            raise ValueError(f"Gemm_SM80: A and B must be the same 16-bit type, got {A_type} and {B_type}")
        self.shape = (M, N, K)
        self.a_k_major = not trans_A  # TileLang: trans_A stores A as K x M
        self.b_k_major = bool(trans_B)  # TileLang: trans_B stores B as N x K
        self.a_layout = _smem_layout(A_type, self.a_k_major, M, K)
        self.b_layout = _smem_layout(B_type, self.b_k_major, N, K)
        self.clear_accum = clear_accum
        op = cute.nvgpu.warp.MmaF16BF16Op(A_type, C_type, (16, 8, 16))
        self.tiled_mma = cute.make_tiled_mma(op, (warp_m, warp_n, 1), (warp_m * 16, warp_n * 16, 16))

    def _operand(self, which, ptr, copy, thr_mma, tidx):
        """(register fragment, ldmatrix copy, shared view, register view) of operand `which` ("A" / "B")."""
        rows = self.shape[0] if which == "A" else self.shape[1]
        if not copy:
            shape = (self.tiled_mma.partition_shape_A if which == "A" else self.tiled_mma.partition_shape_B)(
                (rows, self.shape[2]))
            return cute.make_tensor(ptr, shape), None, None, None
        layout = self.a_layout if which == "A" else self.b_layout
        smem = make_aligned_tensor(ptr, layout, 16)
        partition = thr_mma.partition_A if which == "A" else thr_mma.partition_B
        make_fragment = self.tiled_mma.make_fragment_A if which == "A" else self.tiled_mma.make_fragment_B
        regs = make_fragment(partition(smem))
        k_major = self.a_k_major if which == "A" else self.b_k_major
        atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(not k_major, 4), smem.element_type)
        tiled_copy = (cute.make_tiled_copy_A if which == "A" else cute.make_tiled_copy_B)(atom, self.tiled_mma)
        thr_copy = tiled_copy.get_slice(tidx)
        return regs, tiled_copy, thr_copy.partition_S(smem), thr_copy.retile(regs)

    def _run(self, a_ptr, b_ptr, c_ptr, copy_a, copy_b):
        tidx, _, _ = cute.arch.thread_idx()
        thr_mma = self.tiled_mma.get_slice(tidx)
        acc = cute.make_tensor(c_ptr, self.tiled_mma.partition_shape_C(self.shape[:2]))
        ra, copy_a_op, sa, va = self._operand("A", a_ptr, copy_a, thr_mma, tidx)
        rb, copy_b_op, sb, vb = self._operand("B", b_ptr, copy_b, thr_mma, tidx)
        if self.clear_accum:
            acc.fill(0.0)
        for k in range(cute.size(ra, mode=[2])):
            if copy_a:
                cute.copy(copy_a_op, sa[None, None, k], va[None, None, k])
            if copy_b:
                cute.copy(copy_b_op, sb[None, None, k], vb[None, None, k])
            cute.gemm(self.tiled_mma, acc, ra[None, None, k], rb[None, None, k], acc)

    def __call__(self, sA_ptr, sB_ptr, rC_ptr):
        """A and B in shared memory."""
        self._run(sA_ptr, sB_ptr, rC_ptr, True, True)

    def body_rs(self, rA_ptr, sB_ptr, rC_ptr):
        """A in registers (this thread's fragment), B in shared memory."""
        self._run(rA_ptr, sB_ptr, rC_ptr, False, True)

    def body_sr(self, sA_ptr, rB_ptr, rC_ptr):
        """A in shared memory, B in registers."""
        self._run(sA_ptr, rB_ptr, rC_ptr, True, False)

    def body_rr(self, rA_ptr, rB_ptr, rC_ptr):
        """A and B in registers."""
        self._run(rA_ptr, rB_ptr, rC_ptr, False, False)


class Gemm_SM90:
    """``C += A @ B`` for an M x N x K tile over `warp_m` x `warp_n` warps (`warp_m` a multiple of 4: whole
    warpgroups along M) with ``wgmma``, A from shared memory or registers, B from shared memory."""

    def __init__(self, M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B,
                 offset_A, offset_B, A_type, B_type, C_type):
        import cutlass.utils.hopper_helpers as hopper

        if warp_m % 4:
            raise ValueError(f"Gemm_SM90: warp_m must be a multiple of 4 (a warpgroup), got {warp_m}")
        self.shape = (M, N, K)
        self.atoms = (warp_m // 4, warp_n, 1)
        self.types = (A_type, B_type, C_type)
        self.a_mode = OperandMajorMode.MN if trans_A else OperandMajorMode.K
        self.b_mode = OperandMajorMode.K if trans_B else OperandMajorMode.MN
        self.a_layout = self._layout(hopper, A_type, not trans_A, (M, K))
        self.b_layout = self._layout(hopper, B_type, bool(trans_B), (N, K))
        self.clear_accum = clear_accum

    @staticmethod
    def _layout(hopper, dtype, k_major, tile):
        from cutlass.cute.nvgpu.warpgroup import make_smem_layout_atom

        major = LayoutEnum.ROW_MAJOR if k_major else LayoutEnum.COL_MAJOR
        atom = make_smem_layout_atom(hopper.get_smem_layout_atom(major, dtype, tile[1] if k_major else tile[0]),
                                     dtype)
        return cute.tile_to_shape(atom, tile, (0, 1) if k_major else (1, 0))

    def _tiled_mma(self, a_in_registers):
        import cutlass.utils.hopper_helpers as hopper
        from cutlass.cute.nvgpu.warpgroup import OperandSource

        return hopper.make_trivial_tiled_mma(
            self.types[0], self.types[1], self.a_mode, self.b_mode, self.types[2], self.atoms,
            (64, self.shape[1] // self.atoms[1]), OperandSource.RMEM if a_in_registers else OperandSource.SMEM)

    def _run(self, a_ptr, b_ptr, c_ptr, a_in_registers, wg_wait, clear_accum):
        tidx, _, _ = cute.arch.thread_idx()
        tiled_mma = self._tiled_mma(a_in_registers)
        thr_mma = tiled_mma.get_slice(tidx)
        sb = make_aligned_tensor(b_ptr, self.b_layout, 128, swizzle=True)
        rb = tiled_mma.make_fragment_B(thr_mma.partition_B(sb))
        if a_in_registers:
            ra = cute.make_tensor(a_ptr, tiled_mma.partition_shape_A((self.shape[0], self.shape[2])))
        else:
            ra = tiled_mma.make_fragment_A(thr_mma.partition_A(make_aligned_tensor(a_ptr, self.a_layout, 128,
                                                                                 swizzle=True)))
        acc = cute.make_tensor(c_ptr, tiled_mma.partition_shape_C(self.shape[:2]))
        cute.nvgpu.warpgroup.fence()
        tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, not (clear_accum or self.clear_accum))
        for k in range(cute.size(rb, mode=[2])):
            cute.gemm(tiled_mma, acc, ra[None, None, k], rb[None, None, k], acc)
            tiled_mma.set(cute.nvgpu.warpgroup.Field.ACCUMULATE, True)
        cute.nvgpu.warpgroup.commit_group()
        if wg_wait >= 0:
            cute.nvgpu.warpgroup.wait_group(wg_wait)

    def __call__(self, sA_ptr, sB_ptr, rC_ptr, wg_wait=0, clear_accum=False):
        """A and B in shared memory; waits until `wg_wait` wgmma groups are pending (-1: no wait)."""
        self._run(sA_ptr, sB_ptr, rC_ptr, False, wg_wait, clear_accum)

    def body_rs(self, rA_ptr, sB_ptr, rC_ptr, wg_wait=0, clear_accum=False):
        """A in registers (this thread's fragment), B in shared memory."""
        self._run(rA_ptr, sB_ptr, rC_ptr, True, wg_wait, clear_accum)


def _gemm(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
          A_ptr, B_ptr, C_ptr, sm90):
    cls = Gemm_SM90 if sm90 else Gemm_SM80
    return cls(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
               A_ptr.dtype, B_ptr.dtype, C_ptr.dtype)


def gemm_ss(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A,
            offset_B, use_wgmma=None, wg_wait=0, A_ptr=None, B_ptr=None, C_ptr=None):
    """``tl::gemm_ss``: A and B in shared memory, C in registers (`use_wgmma`: Hopper's wgmma)."""
    gemm = _gemm(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
                 A_ptr, B_ptr, C_ptr, use_wgmma)
    if use_wgmma:
        gemm(A_ptr, B_ptr, C_ptr, wg_wait=wg_wait, clear_accum=clear_accum)
    else:
        gemm(A_ptr, B_ptr, C_ptr)


def gemm_rs(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A,
            offset_B, use_wgmma=None, wg_wait=0, A_ptr=None, B_ptr=None, C_ptr=None):
    """``tl::gemm_rs``: A in registers, B in shared memory."""
    gemm = _gemm(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
                 A_ptr, B_ptr, C_ptr, use_wgmma)
    if use_wgmma:
        gemm.body_rs(A_ptr, B_ptr, C_ptr, wg_wait=wg_wait, clear_accum=clear_accum)
    else:
        gemm.body_rs(A_ptr, B_ptr, C_ptr)


def gemm_sr(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A,
            offset_B, use_wgmma=None, wg_wait=0, A_ptr=None, B_ptr=None, C_ptr=None):
    """``tl::gemm_sr``: A in shared memory, B in registers (mma.sync; wgmma cannot take B from registers)."""
    _gemm(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
          A_ptr, B_ptr, C_ptr, False).body_sr(A_ptr, B_ptr, C_ptr)


def gemm_rr(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A,
            offset_B, use_wgmma=None, wg_wait=0, A_ptr=None, B_ptr=None, C_ptr=None):
    """``tl::gemm_rr``: A and B in registers (mma.sync)."""
    _gemm(M, N, K, warp_m, warp_n, trans_A, trans_B, clear_accum, stride_A, stride_B, offset_A, offset_B,
          A_ptr, B_ptr, C_ptr, False).body_rr(A_ptr, B_ptr, C_ptr)
