"""``tl.gemm`` on tensor cores: mma.sync + ldmatrix (sm_80+) and wgmma (sm_90a).

Serves the calls `tilelang_cuda.passes.mma_accumulators` prepared: C is the thread's accumulator registers
and the call carries the `AccumulatorLayout` (then, when A is a register copy of another accumulator --
`tilelang_cuda.passes.register_operands` -- that accumulator's layout: A fragments are moved from it
directly). Per K step each warp loads its A atoms (``ldmatrix.x4``, or ``.trans`` for a transposed operand)
and B atom pairs, then issues one ``mma.sync.m16n8k*`` per atom.
On sm_90a (layout `WGMMA`) 16-bit shared operands with a hardware swizzle layout (`tilelang_cuda.wgmma_layout`)
are read by ``wgmma`` straight from their tiles through swizzled matrix descriptors (SS form; the swizzle pass
stores the tiles in that layout). Otherwise A stays in registers and B is re-laid into a shared tile of 8x8 core
matrices that a matrix descriptor points at; one ``wgmma.mma_async.m64nNk16`` per 64-row block and K step.
fp32 operands run as tf32 (operands read element-wise); int8 needs A row-major and B transposed (K-major).
fp8 (e4m3 / e5m2, either mix; K-major like int8) runs ``wgmma.mma_async.m64nNk32`` SS on sm_90a when both tiles
take a hardware swizzle layout, otherwise ``mma.sync.m16n8k32`` (sm_89+) in the same register layout.
On sm_70 / sm_72 fp16 operands run Volta's ``mma.sync.m8n8k4`` (`tilelang_cuda.tileops.gemm_sm70`).
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import dtype_bytes
from tilelang.layout import linearize
from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import VOLTA, WGMMA, AccumulatorLayout
from tilelang_cuda.passes.mma_accumulators import is_fp8, mma_kind
from tilelang_cuda.tileops.common import addr as _addr
from tilelang_cuda.tileops.common import extern as _extern
from tilelang_cuda.tileops.common import extern_name, is_cuda
from tilelang_cuda.tileops.common import sync as _sync
from tilelang_cuda.tileops.common import unroll as _unroll
from tilelang_cuda.tileops.copy import tma_enabled
from tilelang_cuda.tileops.gemm_sm70 import lower_volta_gemm
from tilelang_cuda.wgmma_layout import SwizzledTile, tile_layout

SCRATCH = "tl.cuda.scratch"  # AllocBuffer annotation: this shared tile's uses are bracketed by barriers
# b_core tiles up to this size are static ("shared") shared memory: TVM's ThreadSync treats all "shared.dyn"
# buffers as one region, so a b_core there would get a barrier per iteration of the B copy loop (its writes
# "clash" with the next iteration's reads of the B tile). Larger tiles stay dynamic (48 KiB static limit).
STATIC_SCRATCH_BYTES = 32 * 1024
LAYOUT_ARGS = 7  # tl.gemm's own arguments; the accumulator layout follows
# pass_configs={"tl.cuda.enable_wgmma_ss": False} keeps every wgmma on the RS + b_core relayout path
SS_KEY = "tl.cuda.enable_wgmma_ss"
SS_ENABLED_BY_DEFAULT = True


def _applies(ctx: Any) -> bool:
    args = ctx.args
    return len(args) >= LAYOUT_ARGS + 5 and isinstance(args[2], tvm.ir.TensorRegion) and (
        C.scope_of(args[2].source) == "local")


def _read_ptr(buf: Any, idx: list[Any], extent: int = 1) -> Any:
    """A read pointer to ``buf[idx]``: ``tvm_access_ptr`` for shared tiles, so TVM's shared-memory planner sees the
    read (a tile read only through ``address_of`` looks dead there, and its storage gets reused by another tile)."""
    if C.scope_of(buf) not in ("shared", "shared.dyn"):
        return tirx.address_of(tirx.BufferLoad(buf, idx))
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(str(buf.ty.dtype)), buf.data,
                            linearize(idx, list(buf.ty.shape)), extent, 1)


class _Operand:
    """A 2-D operand region (leading dims fixed at their min) addressed as (row, col) of its storage."""

    def __init__(self, region: Any):
        self.buf = region.source
        self.base = [r.min for r in region.region]

    def at(self, row: Any, col: Any) -> list[Any]:
        idx = list(self.base)
        idx[-2] = C.add(idx[-2], row)
        idx[-1] = C.add(idx[-1], col)
        return idx


def a_outer(lay: AccumulatorLayout) -> bool:
    """Whether a K step issues its MMAs A atom by A atom (else B atom by B atom): the operand with more fragment
    registers (A: 4 per 16-row atom, B: 2 per 8-column atom) is the outer loop, so its fragments die one after
    another while the smaller operand's stay live. With the 256 accumulators of a 128x256 tile over 2x2 warps (all
    spilling partly) this spares ptxas most of its fragment moves and address rematerialisation: the sm_80 main loop
    of `benchmarks/sass_kernels.py`'s GEMM takes 425 SASS instructions (465 A outer; the reference's: 410)."""
    return lay.mi * 4 >= lay.ni * 2


class _Gemm:
    def __init__(self, ctx: Any):
        args = ctx.args
        self.ctx = ctx
        self.ta, self.tb, self.clear = bool(ctx.int_arg(3)), bool(ctx.int_arg(4)), bool(ctx.int_arg(6))
        self.layout = AccumulatorLayout.from_args([C.as_int(a) for a in args[LAYOUT_ARGS:LAYOUT_ARGS + 5]])
        # A in registers (`tilelang_cuda.passes.register_operands`): a half copy of an accumulator of this layout
        self.a_regs = (AccumulatorLayout.from_args([C.as_int(a) for a in args[LAYOUT_ARGS + 5:LAYOUT_ARGS + 10]])
                       if len(args) >= LAYOUT_ARGS + 10 else None)
        self.pre: list[Any] = []
        a, b = ctx.region(0), ctx.region(1)
        pre_a, a = ctx.staged(a)
        pre_b, b = ctx.staged(b)
        self.pre = pre_a + pre_b
        self.staged_a, self.staged_b = bool(pre_a), bool(pre_b)
        self.a, self.b = _Operand(a), _Operand(b)
        self.acc = args[2].source
        dtype = str(a.source.ty.dtype)
        self.kind, self.k_atom = mma_kind(dtype, str(b.source.ty.dtype), str(self.acc.ty.dtype))
        self.fp8 = is_fp8(self.kind)
        if self.a_regs is not None:
            self.k = self.a_regs.n
        else:
            ext = [C.as_int(r.extent) for r in a.region[-2:]]
            self.k = ext[0] if self.ta else ext[1]
        self.vec = 16 // dtype_bytes(dtype)  # elements per 16 bytes
        tid = C.linear_thread(ctx.func)
        self.tid, self.threads = tid, C.block_threads(ctx.func)
        self.lane, self.w_m, self.w_n = self.layout.warp_coords(tid)

    # ---------------------------------------------------------------- operand fragments
    def _ptr_a(self, idx: list[Any]) -> Any:
        """ldmatrix row pointer into A: a planner-visible read of a user tile; a tile staged from a fragment here
        (written right before, in this call) keeps ``address_of`` (TVM may merge it with a tile of another dtype,
        which ``tvm_access_ptr`` rejects)."""
        return _addr(self.a.buf, idx) if self.staged_a else _read_ptr(self.a.buf, idx, self.vec)

    def _ptr_b(self, idx: list[Any]) -> Any:
        return _addr(self.b.buf, idx) if self.staged_b else _read_ptr(self.b.buf, idx, self.vec)

    def row0(self, mi: Any) -> Any:
        return mi * (16 * self.layout.wm) + self.w_m * 16

    def load_a(self, frag: Any, slot: Any, mi: Any, ks: Any) -> Any:
        """A atom (mi, ks) -> frag[slot * 4 : slot * 4 + 4] (the mma A fragment order)."""
        lane, row0, kk, vec = self.lane, self.row0(mi), ks * self.k_atom, self.vec
        if self.a_regs is not None:  # the C registers of atoms (mi, 2 ks) and (mi, 2 ks + 1) are this A fragment
            first = (mi * self.a_regs.ni + 2 * ks) * 4
            return _extern("tl_regs_copy16", _addr(frag, [slot * 4]), _addr(self.a.buf, [first]))
        if self.kind == "tf32":
            g, t = lane // 4, lane % 4
            spots = [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]
            return C.seq([tirx.BufferStore(frag, tirx.call_extern("uint32", "tl_bits32", tirx.BufferLoad(
                self.a.buf, self.a.at(*((kk + c, row0 + r) if self.ta else (row0 + r, kk + c))))), [slot * 4 + n])
                for n, (r, c) in enumerate(spots)])
        if self.ta:
            idx = self.a.at(kk + lane % 8 + (lane // 16) * 8, row0 + ((lane // 8) % 2) * 8)
            return _extern("tl_ldmatrix_x4_trans", _addr(frag, [slot * 4]), self._ptr_a(idx))
        idx = self.a.at(row0 + lane % 16, kk + (lane // 16) * vec)
        return _extern("tl_ldmatrix_x4", _addr(frag, [slot * 4]), self._ptr_a(idx))

    def load_b(self, frag: Any, ks: Any) -> Any:
        """Every B atom of this warp at K step ks -> frag[ni * 2 : ni * 2 + 2]."""
        lay, lane, kk, vec = self.layout, self.lane, ks * self.k_atom, self.vec
        col_base = self.w_n * (lay.n // lay.wn)
        if self.kind == "tf32":
            g, t = lane // 4, lane % 4

            def one(ni: Any) -> Any:
                n = col_base + ni * 8 + g
                loads = [self.b.at(n, kk + t + 4 * h) if self.tb else self.b.at(kk + t + 4 * h, n) for h in (0, 1)]
                return C.seq([tirx.BufferStore(frag, tirx.call_extern("uint32", "tl_bits32",
                                                                      tirx.BufferLoad(self.b.buf, ix)), [ni * 2 + h])
                              for h, ix in enumerate(loads)])

            return _unroll(lay.ni, "ni", one)

        def pair(nj: Any) -> Any:
            col0 = col_base + nj * 16
            if self.tb:
                idx = self.b.at(col0 + lane % 8 + (lane // 16) * 8, kk + ((lane // 8) % 2) * vec)
                return _extern("tl_ldmatrix_x4", _addr(frag, [nj * 4]), self._ptr_b(idx))
            idx = self.b.at(kk + lane % 8 + ((lane // 8) % 2) * 8, col0 + (lane // 16) * 8)
            return _extern("tl_ldmatrix_x4_trans", _addr(frag, [nj * 4]), self._ptr_b(idx))

        return _unroll(lay.ni // 2, "nj", pair)

    # ---------------------------------------------------------------- bodies
    def clear_stmt(self) -> list[Any]:
        if not self.clear:
            return []
        return [_unroll(self.layout.regs, "r", lambda r: tirx.BufferStore(
            self.acc, tirx.const(0, str(self.acc.ty.dtype)), [r]))]

    def mma(self) -> Any:
        lay = self.layout
        a_frag = tirx.decl_buffer((lay.mi * 4,), "uint32", name="a_frag", scope="local")
        b_frag = tirx.decl_buffer((lay.ni * 2,), "uint32", name="b_frag", scope="local")
        if self.fp8:  # the generated helper (`tilelang_cuda.intrinsics.mma_sync`)
            func = f"tl_mma_sync_m16n8k32_{self.kind[:4]}_{self.kind[4:]}_fp32"
        else:
            func = f"tl_mma_{self.kind}_{'s32' if self.kind == 's8' else 'f32'}"

        def step(ks: Any) -> Any:
            loads = [_unroll(lay.mi, "mi", lambda mi: self.load_a(a_frag, mi, mi, ks)), self.load_b(b_frag, ks)]

            def atom(mi: Any, ni: Any) -> Any:
                return _extern(func, _addr(self.acc, [(mi * lay.ni + ni) * 4]), _addr(a_frag, [mi * 4]),
                               _addr(b_frag, [ni * 2]))

            return C.seq([*loads, _unroll(lay.mi, "mi", lambda mi: _unroll(lay.ni, "ni", lambda ni: atom(mi, ni)))
                          if a_outer(lay) else
                          _unroll(lay.ni, "ni", lambda ni: _unroll(lay.mi, "mi", lambda mi: atom(mi, ni)))])

        steps = _unroll(self.k // self.k_atom, "ks", step)
        frags = [tirx.AllocBuffer(a_frag), tirx.AllocBuffer(b_frag)]
        return C.seq([*self.pre, _sync(), *frags, *self.clear_stmt(), steps, _sync()])

    # ---------------------------------------------------------------- wgmma operands via swizzled descriptors
    def _swizzled(self, op: _Operand, mn_major: bool, mn: int) -> SwizzledTile | None:
        """The hardware layout wgmma can read operand `op` through (its MN extent per instruction `mn`), or None:
        a 16-bit (or K-major fp8) tile of the dynamic pool (which the swizzle pass keeps 1024-byte aligned) whose
        origin is on the layout's grid: rows (MN for K-major, K for MN-major) in steps of 8; K-major columns in
        instruction K steps inside one block; MN-major columns on whole column blocks (an instruction's MN extent
        spans blocks LBO apart)."""
        if C.scope_of(op.buf) != "shared.dyn":
            return None
        tile = tile_layout(list(op.buf.ty.shape), dtype_bytes(str(op.buf.ty.dtype)))
        if tile is None:
            return None
        r0, c0 = op.base[-2:]
        analyzer = tvm.sym.Analyzer()

        def multiple(x: Any, m: int) -> bool:  # a static or provable multiple (``j * 16`` for a K slice j)
            v = C.as_int(x)
            return v % m == 0 if v is not None else bool(analyzer.can_prove(tirx.floormod(x, m) == 0))

        if not multiple(r0, 8):
            return None
        if not multiple(c0, self.k_atom) if not mn_major else (not multiple(c0, tile.block) or mn % tile.block):
            return None
        return tile

    def desc_tiles(self) -> tuple[SwizzledTile | None, SwizzledTile | None]:
        """The swizzled layouts of A and of B when wgmma can read them straight from their shared tiles (not
        tiles staged from fragments; no TMA, whose boxes are written unswizzled); None where it cannot."""
        from tilelang.backend.sdk import current_tl_config

        if (not current_tl_config(SS_KEY, SS_ENABLED_BY_DEFAULT) or not (self.kind in ("f16", "bf16") or self.fp8)
                or tma_enabled(self.ctx.target)):
            return None, None
        a = None if self.staged_a or self.a_regs is not None else self._swizzled(self.a, self.ta, 64)
        b = None if self.staged_b else self._swizzled(self.b, not self.tb, self.wg_n)
        return a, b

    def _desc(self, op: _Operand, tile: SwizzledTile, mn_major: bool, mn0: Any, ks: Any) -> Any:
        """The descriptor of the operand sub-matrix at MN offset `mn0` and K step `ks` of region `op`. With the
        region's origin static (in its last two dims), the origin's descriptor plus the sub-matrix's swizzled
        byte offset in 16-byte units (the start field's unit; shared addresses stay below its 2^18 bytes): one
        descriptor per tile that nvcc computes once, each instruction's an addition of a constant."""
        dr, dc = (ks * self.k_atom, mn0) if mn_major else (mn0, ks * self.k_atom)
        lbo = tile.rows * tile.width if mn_major else 16
        r0, c0 = (C.as_int(x) for x in op.base[-2:])
        if r0 is None or c0 is None:
            return tirx.call_extern("uint64", "tl_wgmma_desc_sw", _read_ptr(op.buf, op.at(dr, dc)), lbo,
                                    8 * tile.width, tile.mode)
        origin = tirx.call_extern("uint64", "tl_wgmma_desc_sw", _read_ptr(op.buf, op.at(0, 0)), lbo,
                                  8 * tile.width, tile.mode)
        split = self._split_delta(tile, mn_major, mn0, ks, r0, c0)
        if split is not None:
            # the instruction's slice of MN (thread-dependent: its warpgroup's) and its K step apart: the slice's
            # descriptor is one expression for every instruction (computed once) and each instruction adds its
            # constant K step to it, not a sign-extended 64-bit sum of its own
            mn_delta, k_delta = split
            base = origin + tirx.Cast("uint64", tirx.floordiv(mn_delta * tile.elem, 16))
            return base + tirx.Cast("uint64", tirx.floordiv(k_delta * tile.elem, 16))
        delta = (tile.offset(C.add(r0, dr), C.add(c0, dc)) - tile.offset(r0, c0)) * tile.elem
        return origin + tirx.Cast("uint64", tirx.floordiv(delta, 16))

    def _split_delta(self, tile: SwizzledTile, mn_major: bool, mn0: Any, ks: Any, r0: int, c0: int
                     ) -> tuple[Any, Any] | None:
        """``(MN part, K part)`` of a descriptor's element offset from the region's origin when it is their sum for
        every warp's MN slice and every K step (checked on the integers: the swizzle is a XOR), else None."""
        steps = self.k // self.k_atom
        at = (lambda mn, k: (r0 + k, c0 + mn)) if mn_major else (lambda mn, k: (r0 + mn, c0 + k))
        analyzer = tvm.sym.Analyzer()
        slices = set()
        for warp in range(0, max(1, self.threads), 32):
            at_warp = mn0
            if not isinstance(mn0, int) and isinstance(self.tid, tvm.ir.Var):
                at_warp = analyzer.simplify(C.substitute(mn0, {self.tid: tirx.IntImm(str(self.tid.ty.dtype), warp)}))
            value = C.as_int(at_warp)
            if value is None:
                return None
            slices.add(value)
        origin = tile.offset(r0, c0)
        for mn in slices:
            for step in range(steps):
                k = step * self.k_atom
                whole = tile.offset(*at(mn, k)) - origin
                if whole != (tile.offset(*at(mn, 0)) - origin) + (tile.offset(*at(0, k)) - origin):
                    return None
        return (tile.offset(*at(mn0, 0)) - origin, tile.offset(*at(0, ks * self.k_atom)) - origin)

    @property
    def wg_n(self) -> int:
        """N of one wgmma instruction: the warpgroup's column slice (all of N unless warpgroups split N)."""
        return self.layout.n // self.layout.wn

    def _b_col(self) -> Any:
        """First column of this warpgroup's slice of N (0 when the warpgroups are stacked along M)."""
        return 0 if self.layout.wn == 1 else self.w_n * self.wg_n

    def _a_row(self, mi: Any) -> Any:
        """First row of warpgroup ``w_m // 4``'s 64-row block for atom row `mi` (its four warps' rows)."""
        return mi * (16 * self.layout.wm) + (self.w_m // 4) * 64

    def _issue_async(self, issue: Any, extra: list[Any]) -> Any:
        # The operands' cp.async / st.shared writes are generic-proxy writes and the descriptors read through the
        # async proxy: after the barrier that publishes the writes (it merges with the pipeline's barrier after
        # its cp.async wait), every thread issues a proxy fence, so the writes precede the fence and the fence
        # precedes the wgmma in causality order. The trailing barrier keeps a later copy from overwriting a tile
        # another warpgroup's wgmma still reads (wait_group 0 covers only the own warpgroup's reads). In a
        # pipelined loop AsyncCopyPipeline may relax the SS form's wait to wait_group 1 (`deferrable_wgmma`).
        # Operands only TMA writes (the warp-specialised consumer, `tilelang_cuda.passes.warp_specialize`) are
        # published by the mbarrier the consumer waited on and recycled through another after this wait: no block
        # barrier, no proxy fence.
        tma_fed = not self.pre and self._tma_written(self.a.buf) and self._tma_written(self.b.buf)
        return C.seq([*self.pre, *([] if tma_fed else [_sync(), _extern("tl_fence_proxy_async")]), *extra,
                      *self.clear_stmt(), _extern("tl_wgmma_fence"), _unroll(self.k // self.k_atom, "ks", issue),
                      _extern("tl_wgmma_commit"), _extern("tl_wgmma_wait"), *([] if tma_fed else [_sync()])])

    def _tma_written(self, buf: Any) -> bool:
        from tilelang_cuda.passes.warp_specialize import ASYNC_TILE

        alloc = next((a for a in C.allocations(self.ctx.func.body) if a.buffer.same_as(buf)), None)
        return alloc is not None and bool((alloc.annotations or {}).get(ASYNC_TILE, False))

    def wgmma_ss(self, a_tile: SwizzledTile, b_tile: SwizzledTile) -> Any:
        """SS form: A and B both through descriptors (no ldmatrix, no relayout)."""
        lay = self.layout
        trans_a, trans_b = int(self.ta), int(not self.tb)
        func = f"tl_wgmma_ss_m64n{self.wg_n}k{self.k_atom}_{self.kind}_t{trans_a}{trans_b}"

        def issue(ks: Any) -> Any:
            b_desc = self._desc(self.b, b_tile, bool(trans_b), self._b_col(), ks)
            return _unroll(lay.mi, "mi", lambda mi: _extern(
                func, _addr(self.acc, [mi * lay.ni * 4]), self._desc(self.a, a_tile, self.ta, self._a_row(mi), ks),
                b_desc))

        return self._issue_async(issue, [])

    def wgmma_rs_swizzled_b(self, b_tile: SwizzledTile) -> Any:
        """RS form with B through a swizzled descriptor: A (e.g. staged from a fragment) by ldmatrix."""
        lay = self.layout
        steps = self.k // 16
        trans_b = int(not self.tb)
        a_frag = tirx.decl_buffer((steps * lay.mi * 4,), "uint32", name="a_frag", scope="local")
        loads = _unroll(steps, "ks", lambda ks: _unroll(lay.mi, "mi", lambda mi: self.load_a(
            a_frag, ks * lay.mi + mi, mi, ks)))
        func = f"tl_wgmma_rs_m64n{self.wg_n}k16_{self.kind}_t{trans_b}"

        def issue(ks: Any) -> Any:
            b_desc = self._desc(self.b, b_tile, bool(trans_b), self._b_col(), ks)
            return _unroll(lay.mi, "mi", lambda mi: _extern(
                func, _addr(self.acc, [mi * lay.ni * 4]), _addr(a_frag, [(ks * lay.mi + mi) * 4]), b_desc))

        return self._issue_async(issue, [tirx.AllocBuffer(a_frag), loads])

    def b_core_matrices(self) -> tuple[Any, Any]:
        """``(b_core, stage)``: a shared scratch tile holding B as K-major 8x8 core matrices (element (n, k) at
        ``((k//8) * (N//8) + n//8) * 64 + (n%8) * 8 + k%8``) and the parallel nest that fills it."""
        k, n = self.k, self.layout.n
        dtype = str(self.b.buf.ty.dtype)
        scope = "shared" if n * k * dtype_bytes(dtype) <= STATIC_SCRATCH_BYTES else "shared.dyn"
        b_core = tirx.decl_buffer((n * k,), dtype, name="b_core", scope=scope)

        def relayout(vs: list[Any]) -> Any:
            nn, kk = vs
            src = self.b.at(nn, kk) if self.tb else self.b.at(kk, nn)
            dst = ((kk // 8) * (n // 8) + nn // 8) * 64 + (nn % 8) * 8 + kk % 8
            return tirx.BufferStore(b_core, tirx.BufferLoad(self.b.buf, src), [dst])

        return b_core, C.make_parallel_nest([n, k], relayout, names="nk")

    def wgmma(self) -> Any:
        a_tile, b_tile = self.desc_tiles()
        if a_tile is not None and b_tile is not None:
            return self.wgmma_ss(a_tile, b_tile)
        if self.fp8:  # fp8 wgmma reads A and B through descriptors here; otherwise mma.sync, same registers
            return self.mma()
        if b_tile is not None:
            return self.wgmma_rs_swizzled_b(b_tile)
        lay, k, n = self.layout, self.k, self.layout.n
        steps = k // 16
        b_core, stage = self.b_core_matrices()
        a_frag = tirx.decl_buffer((steps * lay.mi * 4,), "uint32", name="a_frag", scope="local")
        loads = _unroll(steps, "ks", lambda ks: _unroll(lay.mi, "mi", lambda mi: self.load_a(
            a_frag, ks * lay.mi + mi, mi, ks)))
        func = f"tl_wgmma_m64n{self.wg_n}k16_{self.kind}"
        elem = 2
        lbo, sbo = n * 8 * elem, 8 * 8 * elem  # bytes between core matrices along K / along N

        def issue(ks: Any) -> Any:
            start = C.add(ks * 2 * (n // 8) * 64, tirx.floordiv(self._b_col(), 8) * 64 if lay.wn > 1 else 0)
            desc = tirx.call_extern("uint64", "tl_wgmma_desc", _addr(b_core, [start]), lbo, sbo)
            return _unroll(lay.mi, "mi", lambda mi: _extern(
                func, _addr(self.acc, [mi * lay.ni * 4]), _addr(a_frag, [(ks * lay.mi + mi) * 4]), desc))

        # a scratch tile: bracketed by barriers, so every wgmma of the kernel may share one
        # (passes/share_scratch_tiles.py); its generic-proxy stores are ordered before the wgmma's async-proxy reads by
        # each writer's proxy fence
        return C.seq([*self.pre, _sync(), tirx.AllocBuffer(b_core, {SCRATCH: 1}), stage,
                      _extern("tl_fence_proxy_async"), _sync(),
                      tirx.AllocBuffer(a_frag), *self.clear_stmt(), loads, _extern("tl_wgmma_fence"),
                      _unroll(steps, "ks", issue), _extern("tl_wgmma_commit"), _extern("tl_wgmma_wait"), _sync()])


# ---------------------------------------------------------------- wgmma batches kept in flight (async pipeline)
WAIT = "tl_wgmma_wait"  # wgmma.wait_group 0: how every wgmma lowering ends
WAIT_GROUP = "tl_wgmma_wait_group"  # wgmma.wait_group N (intrinsics.py)
FENCE_ACC = "tl_wgmma_fence_acc"  # pins the accumulator registers after a wait (no read hoisted above it)
# pass_configs={"tl.cuda.wgmma_async_depth": 0} keeps every pipelined SS gemm on wait_group 0
ASYNC_DEPTH_KEY = "tl.cuda.wgmma_async_depth"
ASYNC_DEPTH_DEFAULT = 1


def deferrable_wgmma(body: Any) -> Any | None:
    """The accumulator tile of `body` when it is a lowered SS wgmma gemm (`_Gemm.wgmma_ss`) that may leave its
    batch in flight: ``[sync, fence.proxy, wgmma.fence, wgmmas, commit, wait 0, sync]`` with no store (no clear,
    no staged operand: registers an in-flight wgmma reads must not be rewritten), every wgmma on one accumulator
    and both operands read through descriptors (the RS forms read A registers the next stage reloads)."""
    flat = C.seq([body])
    flat = list(flat.seq) if isinstance(flat, tirx.SeqStmt) else [flat]
    tail = [extern_name(s) for s in flat[-3:-1]]
    if len(flat) < 4 or tail != ["tl_wgmma_commit", WAIT] or C.collect(body, tirx.BufferStore):
        return None
    accs = []
    for stmt in C.collect(body, tirx.Stmt, lambda s: not isinstance(s, (tirx.SeqStmt, tirx.For))):
        name = extern_name(stmt)
        if name is None:
            call = stmt.value if isinstance(stmt, tirx.Evaluate) else None
            if not (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op)
                    and call.op.name == "tirx.tvm_storage_sync"):
                return None
        elif name.startswith("tl_wgmma_ss_"):
            loads = C.collect(stmt.value.args[1], tvm.ir.TensorLoad)
            accs += [load.source for load in loads]
        elif name not in ("tl_fence_proxy_async", "tl_wgmma_fence", "tl_wgmma_commit", WAIT):
            return None
    if not accs or any(not acc.same_as(accs[0]) for acc in accs) or C.scope_of(accs[0]) != "local":
        return None
    return accs[0]


def defer_wait(body: Any, depth: int) -> Any:
    """`body` (a `deferrable_wgmma`) with its ``wait_group 0`` relaxed to ``wait_group depth``: the newest
    `depth` batches stay in flight (reading their shared operands and writing the accumulator)."""
    flat = C.seq([body])
    flat = list(flat.seq)
    flat[-2] = _extern(WAIT_GROUP, depth)
    return C.seq(flat)


def retire(acc: Any) -> list[Any]:
    """``wgmma.wait_group 0`` for every batch still in flight, then the accumulator registers pinned behind it."""
    regs = C.num_elements(acc.ty.shape)
    return [_extern(WAIT_GROUP, 0), _extern(FENCE_ACC, _addr(acc, [0]), regs)]


def lower_gemm(ctx: Any) -> Any:
    layout = AccumulatorLayout.from_args([C.as_int(a) for a in ctx.args[LAYOUT_ARGS:LAYOUT_ARGS + 5]])
    if layout.instr in VOLTA:
        return lower_volta_gemm(ctx, layout)
    gemm = _Gemm(ctx)
    return gemm.wgmma() if gemm.layout.instr == WGMMA else gemm.mma()


GEMM = TileOpImpl("tl.gemm", "cuda_tensor_core", lower_gemm, supports_target=is_cuda, applies=_applies, priority=10)
