"""``tl.gemm_sp`` on sparse tensor cores: ``mma.sp::ordered_metadata`` (sm_80+) and, for fp16/bf16 on sm_90a,
``wgmma.mma_async.sp`` (`_SparseGemm.wgmma_sp`); A 2:4-sparse.

Serves the calls `tilelang_cuda.passes.mma_accumulators` prepared (C is the thread's accumulator registers, the
call carries its `AccumulatorLayout`). One sparse atom covers twice the dense atom's K: ``m16n8k32`` for
fp16/bf16, ``m16n8k64`` for int8 and fp8 (e4m3 / e5m2, sm_89+). Its A fragment is the dense atom's fragment of
the compressed tile (K/2 columns, loaded by ldmatrix exactly like `tilelang_cuda.tileops.gemm`), its B fragment
the two dense B fragments of its K halves, and its metadata one 32-bit register per thread assembled from E
(row-major metadata, as TileLang's compressors write it: one 4-bit chunk per group of four dense columns, its two
kept indices in bits 1:0 and 3:2):

- 16-bit A (sparsity selector 0): lane ``4g + t``, ``t < 2``: the 16 bits of rows ``g`` (low half) and ``g + 8``
  (high half) for dense columns ``16t .. 16t + 15`` of the atom (lanes ``t >= 2`` pass the same, unused);
- 8-bit A (int8, fp8): lane ``4g + t``: the 32 bits of row ``g + 8 (t % 2)`` for dense columns
  ``32 (t // 2) .. + 31``.

``wgmma.sp`` (m64nNk32) reads each warp's 16 rows of A and of the metadata in the layouts of the fp16 ``mma.sp``
atom above.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import WGMMA, AccumulatorLayout
from tilelang_cuda.passes.mma_accumulators import BYTE_KINDS, SPARSE_KINDS
from tilelang_cuda.tileops.common import addr as _addr
from tilelang_cuda.tileops.common import extern as _extern
from tilelang_cuda.tileops.common import is_cuda
from tilelang_cuda.tileops.common import sync as _sync
from tilelang_cuda.tileops.common import unroll as _unroll
from tilelang_cuda.tileops.gemm import SCRATCH, _Gemm, _Operand

__all__ = ["GEMM_SP", "LAYOUT_ARGS", "SPARSE_KINDS", "lower_gemm_sp", "metadata_bits"]

LAYOUT_ARGS = 9  # tl.gemm_sp's own arguments; the accumulator layout follows


def _applies(ctx: Any) -> bool:
    args = ctx.args
    return len(args) >= LAYOUT_ARGS + 5 and isinstance(args[3], tvm.ir.TensorRegion) and (
        C.scope_of(args[3].source) == "local")


def metadata_bits(e: _Operand, trans_e: bool, row: Any, k0: Any, nbits: int) -> Any:
    """``nbits`` (16 or 32) bits of metadata of A row `row` from dense column `k0` (a multiple of 16) on, as a
    uint32: the chunks of groups ``k0 / 4 ..`` gathered from E's row-major elements (8, 16 or 32 bits each)."""
    ebits = tvm.DataType(str(e.buf.ty.dtype)).bits
    per = ebits // 4  # groups (4-bit chunks) per E element
    group = tirx.floordiv(k0, 4)

    def elem(col: Any) -> Any:
        idx = e.at(col, row) if trans_e else e.at(row, col)
        return tirx.Cast("uint32", tirx.BufferLoad(e.buf, idx))

    if nbits <= ebits:
        shift = tirx.Cast("uint32", 4 * tirx.floormod(group, per))
        word = tirx.shift_right(elem(tirx.floordiv(group, per)), shift)
        return word if nbits == 32 else tirx.bitwise_and(word, tirx.const((1 << nbits) - 1, "uint32"))
    out = None
    for i in range(nbits // ebits):
        part = tirx.bitwise_and(elem(tirx.floordiv(group, per) + i), tirx.const((1 << ebits) - 1, "uint32"))
        part = tirx.shift_left(part, tirx.const(ebits * i, "uint32")) if i else part
        out = part if out is None else tirx.bitwise_or(out, part)
    return out


class _SparseGemm(_Gemm):
    """The ``tl.gemm_sp`` call ``(A_sparse, E, B, C, trans_A, trans_E, trans_B, policy, clear, *layout)``;
    A and B fragments come from `_Gemm`'s loaders (A over the compressed K, B over the dense K)."""

    def __init__(self, ctx: Any):  # the operands of another call shape than _Gemm's
        args = ctx.args
        self.ctx = ctx
        self.ta, self.te, self.tb = bool(ctx.int_arg(4)), bool(ctx.int_arg(5)), bool(ctx.int_arg(6))
        self.clear = bool(ctx.int_arg(8))
        self.layout = AccumulatorLayout.from_args([C.as_int(a) for a in args[LAYOUT_ARGS:LAYOUT_ARGS + 5]])
        self.a_regs = None
        a, e, b = ctx.region(0), ctx.region(1), ctx.region(2)
        pre_a, a = ctx.staged(a)
        pre_e, e = ctx.staged(e)
        pre_b, b = ctx.staged(b)
        self.pre = pre_a + pre_e + pre_b
        self.staged_a, self.staged_b = bool(pre_a), bool(pre_b)
        self.a, self.e, self.b = _Operand(a), _Operand(e), _Operand(b)
        self.acc = args[3].source
        self.kind, self.k_atom = SPARSE_KINDS[(str(a.source.ty.dtype), str(self.acc.ty.dtype))]
        ext = [C.as_int(r.extent) for r in b.region[-2:]]
        self.k = ext[1] if self.tb else ext[0]  # dense K
        self.vec = 16 // (1 if self.kind in BYTE_KINDS else 2)
        tid = C.linear_thread(ctx.func)
        self.lane, self.w_m, self.w_n = self.layout.warp_coords(tid)

    def metadata(self, mi: Any, s: Any) -> Any:
        """This thread's metadata register of sparse atom (mi, K step s)."""
        g, t = self.lane // 4, self.lane % 4
        row0 = self.row0(mi) + g
        if self.kind in BYTE_KINDS:
            return metadata_bits(self.e, self.te, row0 + 8 * (t % 2), s * 64 + 32 * (t // 2), 32)
        k0 = s * 32 + 16 * (t % 2)
        low = metadata_bits(self.e, self.te, row0, k0, 16)
        high = metadata_bits(self.e, self.te, row0 + 8, k0, 16)
        return tirx.bitwise_or(low, tirx.shift_left(high, tirx.const(16, "uint32")))

    def mma_sp(self) -> Any:
        lay = self.layout
        a_frag = tirx.decl_buffer((lay.mi * 4,), "uint32", name="a_frag", scope="local")
        b_lo = tirx.decl_buffer((lay.ni * 2,), "uint32", name="b_lo", scope="local")
        b_hi = tirx.decl_buffer((lay.ni * 2,), "uint32", name="b_hi", scope="local")
        e_reg = tirx.decl_buffer((lay.mi,), "uint32", name="e_reg", scope="local")
        func = f"tl_mma_sp_{self.kind}_{'s32' if self.kind == 's8' else 'f32'}"

        def step(s: Any) -> Any:
            loads = [_unroll(lay.mi, "mi", lambda mi: self.load_a(a_frag, mi, mi, s)),
                     self.load_b(b_lo, 2 * s), self.load_b(b_hi, 2 * s + 1),
                     _unroll(lay.mi, "mi", lambda mi: tirx.BufferStore(e_reg, self.metadata(mi, s), [mi]))]
            issue = _unroll(lay.mi, "mi", lambda mi: _unroll(lay.ni, "ni", lambda ni: _extern(
                func, _addr(self.acc, [(mi * lay.ni + ni) * 4]), _addr(a_frag, [mi * 4]), _addr(b_lo, [ni * 2]),
                _addr(b_hi, [ni * 2]), tirx.BufferLoad(e_reg, [mi]))))
            return C.seq([*loads, issue])

        steps = _unroll(self.k // (2 * self.k_atom), "ks", step)
        frags = [tirx.AllocBuffer(f) for f in (a_frag, b_lo, b_hi, e_reg)]
        return C.seq([*self.pre, _sync(), *frags, *self.clear_stmt(), steps, _sync()])


    def wgmma_sp(self) -> Any:
        """sm_90a: one ``wgmma.mma_async.sp.m64nNk32`` per 64-row block and K step of 32; A (compressed) and the
        metadata in registers, B re-laid into a shared tile of K-major 8x8 core matrices (as the dense RS path)."""
        lay, k, n = self.layout, self.k, self.layout.n
        steps = k // 32
        b_core, stage = self.b_core_matrices()
        a_frag = tirx.decl_buffer((steps * lay.mi * 4,), "uint32", name="a_frag", scope="local")
        e_reg = tirx.decl_buffer((steps * lay.mi,), "uint32", name="e_reg", scope="local")
        loads = _unroll(steps, "ks", lambda s: _unroll(lay.mi, "mi", lambda mi: C.seq([
            self.load_a(a_frag, s * lay.mi + mi, mi, s),
            tirx.BufferStore(e_reg, self.metadata(mi, s), [s * lay.mi + mi])])))
        func = f"tl_wgmma_sp_m64n{n}k32_{self.kind}"
        lbo, sbo = n * 8 * 2, 8 * 8 * 2  # bytes between core matrices along K / along N

        def issue(s: Any) -> Any:
            desc = tirx.call_extern("uint64", "tl_wgmma_desc", _addr(b_core, [s * 4 * (n // 8) * 64]), lbo, sbo)
            return _unroll(lay.mi, "mi", lambda mi: _extern(
                func, _addr(self.acc, [mi * lay.ni * 4]), _addr(a_frag, [(s * lay.mi + mi) * 4]), desc,
                tirx.BufferLoad(e_reg, [s * lay.mi + mi])))

        return C.seq([*self.pre, _sync(), tirx.AllocBuffer(b_core, {SCRATCH: 1}), stage,
                      _extern("tl_fence_proxy_async"), _sync(), tirx.AllocBuffer(a_frag), tirx.AllocBuffer(e_reg),
                      *self.clear_stmt(), loads, _extern("tl_wgmma_fence"), _unroll(steps, "ks", issue),
                      _extern("tl_wgmma_commit"), _extern("tl_wgmma_wait"), _sync()])


def lower_gemm_sp(ctx: Any) -> Any:
    gemm = _SparseGemm(ctx)
    return gemm.wgmma_sp() if gemm.layout.instr == WGMMA else gemm.mma_sp()


GEMM_SP = TileOpImpl("tl.gemm_sp", "cuda_sparse_tensor_core", lower_gemm_sp, supports_target=is_cuda,
                     applies=_applies, priority=10)
