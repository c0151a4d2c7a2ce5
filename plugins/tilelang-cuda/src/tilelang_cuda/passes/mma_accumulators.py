"""MMAAccumulators: keep the C fragment of a tensor-core ``T.gemm`` in the MMA register layout.

Core distributes fragments cyclically over threads; tensor cores need `tilelang_cuda.mma_layout`'s layout.
For every ``local.fragment`` C of an eligible gemm (dtypes fp16/bf16/tf32/int8, or fp8 e4m3 / e5m2 in either
mix on sm_89+; on sm_70 / sm_72 fp16 operands into fp16 or fp32, Volta's m8n8k4 layouts; tile sizes that split
into MMA atoms over the block's warps) whose every use is understood, this
pass (at ``pre_layout``) replaces the fragment by per-thread registers (scope ``local``) and rewrites its uses
in that layout:

- ``tl.gemm(A, B, C)`` gets the register buffer and the layout as extra arguments (lowered by
  `tilelang_cuda.tileops.gemm`), so does ``tl.gemm_sp(A, E, B, C)`` (`tilelang_cuda.tileops.gemm_sp`) and
  ``tl.mma_gemm_blockscaled`` (sm_120 block-scaled fp4, 16 x 16 warp atoms; `tilelang_cuda.tileops.gemm_blockscaled`);
  ``tl.fill`` and ``tl.copy`` from/to non-fragment memory become per-thread
  register loops; a ``T.Parallel(M, N)`` nest that indexes C by its own loop variables (and writes no other
  fragment) runs over the thread's registers;
- tile ops that read C across elements (reduce, copy into another fragment, gemm operands, atomics) read a
  shared-memory copy staged from the registers;
- a fragment of C's shape that a nest writes element for element from C (``P[i, j] = S[i, j] * scale[i]``, then
  copied to shared memory) follows C's layout, when its every use is one of the above (`_Plan.add_followers`).

Any other use leaves the fragment to core's generic path (always correct, slower).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import MMA, VOLTA, VOLTA_F16, VOLTA_F32, AccumulatorLayout, choose
from tilelang_cuda.passes.accumulator_rows import (
    RowLayout,
    RowRewriter,
    cast_to,
    full_region,
    plan_rows,
    scan_tile_program,
    slot_of,
)
from tilelang_cuda.passes.register_operands import plan_register_operands

FRAGMENT = "local.fragment"
# (A dtype, C dtype) -> (MMA kind, K of one atom)
MMA_KINDS = {("float16", "float32"): ("f16", 16), ("bfloat16", "float32"): ("bf16", 16),
             ("float32", "float32"): ("tf32", 8), ("int8", "int32"): ("s8", 32)}
# fp8 operand dtype -> its PTX type; A and B may mix them (e4m3 x e5m2), K of one atom is 32 (32 bytes, as k16
# of 16-bit types); the hardware reads fp8 operands K-major only (wgmma has no transpose for 8-bit types)
FP8_KINDS = {"float8_e4m3fn": "e4m3", "float8_e4m3": "e4m3", "float8_e5m2": "e5m2"}
FP8_K = 32
FP8_MIN_ARCH = 89  # mma.sync.m16n8k32 .e4m3 / .e5m2


def mma_kind(a_dtype: str, b_dtype: str, c_dtype: str) -> tuple[str, int] | None:
    """``(kind, K of one atom)`` of a tensor-core gemm of these dtypes, or None; an fp8 kind names both operand
    types (``e4m3e5m2``)."""
    if a_dtype in FP8_KINDS and b_dtype in FP8_KINDS:
        return (FP8_KINDS[a_dtype] + FP8_KINDS[b_dtype], FP8_K) if c_dtype == "float32" else None
    return MMA_KINDS.get((a_dtype, c_dtype)) if a_dtype == b_dtype else None


def is_fp8(kind: str) -> bool:
    """Whether an MMA kind of `mma_kind` has fp8 operands."""
    return kind[:1] == "e"


# sparse (mma.sp): (A dtype, C dtype) -> (MMA kind, K of the dense atom whose A / B fragments one sparse atom uses)
# (fp8: sm_89+)
SPARSE_KINDS = {("float16", "float32"): ("f16", 16), ("bfloat16", "float32"): ("bf16", 16),
                ("int8", "int32"): ("s8", 32), ("float8_e4m3", "float32"): ("e4m3", 32),
                ("float8_e4m3fn", "float32"): ("e4m3", 32), ("float8_e5m2", "float32"): ("e5m2", 32)}
BYTE_KINDS = ("s8", "e4m3", "e5m2")
OPERAND_SCOPES = ("shared", "shared.dyn", FRAGMENT)


def arch_of(target: Any) -> tuple[int, bool]:
    """``(compute capability * 10, arch-specific 'a' variant)`` of a CUDA target (``sm_90a`` -> (90, True))."""
    arch = str(target.attrs.get("arch", "sm_80")) if hasattr(target, "attrs") else str(target.get("arch"))
    digits = "".join(ch for ch in arch if ch.isdigit())
    return int(digits or 80), arch.endswith("a")


def _static(values: list[Any]) -> list[int] | None:
    out = [C.as_int(v) for v in values]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _nonunit(region: Any) -> list[int]:
    return [d for d, r in enumerate(region.region) if not C.is_const(r.extent, 1)]


def gemm_layout(call: Any, target: Any, threads: int) -> AccumulatorLayout | None:
    """The accumulator layout for this ``tl.gemm`` call, or None when tensor cores cannot serve it."""
    args = list(call.args)
    if len(args) < 7 or not all(isinstance(a, tvm.ir.TensorRegion) for a in args[:3]):
        return None
    a, b, c = args[:3]
    if C.scope_of(c.source) != FRAGMENT or len(c.source.ty.shape) != 2 or not full_region(c):
        return None
    if any(C.scope_of(x.source) not in OPERAND_SCOPES for x in (a, b)):
        return None
    kind = mma_kind(str(a.source.ty.dtype), str(b.source.ty.dtype), str(c.source.ty.dtype))
    ta, tb, policy = C.as_int(args[3]), C.as_int(args[4]), C.as_int(args[5]) or 0
    mn = _static(list(c.source.ty.shape))
    ak = _static([r.extent for r in a.region[-2:]])
    if arch_of(target)[0] in VOLTA_ARCHS:
        return volta_layout(str(a.source.ty.dtype), str(b.source.ty.dtype), str(c.source.ty.dtype), mn, ak, ta,
                            threads, policy)
    if kind is None or mn is None or ak is None or threads % 32:
        return None
    name, k_atom = kind
    k = ak[0] if ta else ak[1]
    if k % k_atom or ((name == "s8" or is_fp8(name)) and (ta or not tb)):
        return None
    major, specific = arch_of(target)
    if major < 80 or (is_fp8(name) and major < FP8_MIN_ARCH):
        return None
    if major == 90 and specific and (name in ("f16", "bf16") or is_fp8(name)):
        layout = choose(mn[0], mn[1], threads // 32, policy, wgmma=True, split_n=True)
        # fp8 tiles wgmma cannot read through descriptors run mma.sync in this layout (16-column atom pairs)
        if layout is not None and (not is_fp8(name) or mn[1] % 16 == 0):
            return layout
    return choose(mn[0], mn[1], threads // 32, policy, n_unit=8 if name == "tf32" else 16)


VOLTA_ARCHS = (70, 72)  # mma.sync.m8n8k4 is the tensor-core T.gemm there
VOLTA_KINDS = {"float32": VOLTA_F32, "float16": VOLTA_F16}  # fp16 operands; accumulator dtype -> layout


def volta_layout(a_dtype: str, b_dtype: str, c_dtype: str, mn: list[int] | None, ak: list[int] | None, ta: Any,
                 threads: int, policy: int) -> AccumulatorLayout | None:
    """Volta's layout (fp16 operands, fp16 / fp32 accumulators, K a multiple of 4, 16 x 16 warp atoms) or None
    (then T.gemm runs on CUDA cores)."""
    if a_dtype != "float16" or b_dtype != "float16" or c_dtype not in VOLTA_KINDS:
        return None
    if mn is None or ak is None or threads % 32 or (ak[0] if ta else ak[1]) % 4:
        return None
    return choose(mn[0], mn[1], threads // 32, policy, n_unit=16, instr=VOLTA_KINDS[c_dtype])


def gemm_sp_layout(call: Any, target: Any, threads: int) -> AccumulatorLayout | None:
    """The accumulator layout for this ``tl.gemm_sp`` call (``mma.sp``, sm_80+; ``wgmma.sp`` for fp16/bf16 on
    sm_90a), or None when sparse tensor cores cannot serve it (core's generic lowering does)."""
    args = list(call.args)
    if len(args) < 9 or not all(isinstance(x, tvm.ir.TensorRegion) for x in args[:4]):
        return None
    a, e, b, c = args[:4]
    if C.scope_of(c.source) != FRAGMENT or len(c.source.ty.shape) != 2 or not full_region(c):
        return None
    if any(C.scope_of(x.source) not in OPERAND_SCOPES for x in (a, e, b)) or a.source.ty.dtype != b.source.ty.dtype:
        return None
    if tvm.DataType(str(e.source.ty.dtype)).bits not in (8, 16, 32):
        return None
    kind = SPARSE_KINDS.get((str(a.source.ty.dtype), str(c.source.ty.dtype)))
    ta, tb, policy = C.as_int(args[4]), C.as_int(args[6]), C.as_int(args[7]) or 0
    mn = _static(list(c.source.ty.shape))
    bk = _static([r.extent for r in b.region[-2:]])
    if kind is None or mn is None or bk is None or threads % 32:
        return None
    name, k_atom = kind
    k = bk[1] if tb else bk[0]
    if k % (2 * k_atom) or (name in BYTE_KINDS and (ta or not tb)):
        return None
    major, specific = arch_of(target)
    if major < (89 if name in ("e4m3", "e5m2") else 80):
        return None
    if major == 90 and specific and name in ("f16", "bf16"):  # wgmma.sp
        layout = choose(mn[0], mn[1], threads // 32, policy, wgmma=True)
        if layout is not None:
            return layout
    return choose(mn[0], mn[1], threads // 32, policy, n_unit=16)


BLOCK_SCALED = "tl.mma_gemm_blockscaled"
BLOCK_SCALED_ARGS = 13  # its own arguments; the accumulator layout follows


def blockscaled_layout(call: Any, target: Any, threads: int) -> AccumulatorLayout | None:
    """The accumulator layout of a ``T.mma_gemm_blockscaled`` call (sm_120 block-scaled mma.sync: 16 x 16 atoms
    per warp, so M splits in 16-row and N in 16-column warp tiles), or None."""
    args = list(call.args)
    c = args[2]
    if C.scope_of(c.source) != FRAGMENT or len(c.source.ty.shape) != 2 or not full_region(c) or threads % 32:
        return None
    mn = _static(list(c.source.ty.shape))
    if mn is None:
        return None
    return choose(mn[0], mn[1], threads // 32, C.as_int(args[7]) or 0, n_unit=16)


def _role_threads(func: Any, fragments: set[Any], threads: int) -> dict[Any, int]:
    """Fragments used only by `count` threads of the block starting on a multiple of `count` (the consumer
    warpgroups of a warp-specialised kernel, ``with T.ws(0, 1)``, or one of them, ``if 128 <= tx < 256``: a branch
    on the thread index, `thread_range`): `count`. Their layout spreads over those threads only (layouts repeat
    every `count` threads, `AccumulatorLayout.warp_coords`); a fragment also used elsewhere keeps the whole block."""
    from tilelang.backend.sdk import single_thread_var, walk_ranges

    tid = single_thread_var(func)
    if tid is None:
        return {}
    seen: dict[Any, set[Any]] = {}

    def touched(node: Any) -> set[Any]:
        found = {ld.source for ld in C.collect(node, tvm.ir.TensorLoad)}
        found |= {st.buffer for st in C.collect(node, tirx.BufferStore)}
        found |= {r.source for r in C.collect(node, tvm.ir.TensorRegion)}
        return found & fragments

    def visit(node: Any, m: Any, span: Any) -> Any:
        for buf in touched(node):
            seen.setdefault(buf, set()).add(span)
        return node

    walk_ranges(func.body, tid, threads, visit, (tirx.Evaluate, tirx.BufferStore))
    out = {}
    for buf, spans in seen.items():
        if len(spans) == 1:
            span = next(iter(spans))
            if span is not None and span[1] < threads and span[1] % 128 == 0 and span[0] % span[1] == 0:
                out[buf] = span[1]
    return out


class _Plan:
    """Per candidate fragment: its layout, then whether every use is understood."""

    def __init__(self, func: Any, target: Any):
        self.threads = C.block_threads(func)
        self.fragments = {a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == FRAGMENT}
        self.role_threads = _role_threads(func, self.fragments, self.threads)
        self.layouts: dict[Any, AccumulatorLayout] = {}
        self.n_units: dict[Any, int] = {}  # mma.sync accumulators: columns of a warp's B load unit
        self.bad: set[Any] = set()
        self.target = target

    def add_gemm(self, call: Any, sparse: bool = False) -> None:
        c = call.args[3 if sparse else 2]
        if not isinstance(c, tvm.ir.TensorRegion) or c.source not in self.fragments:
            return
        threads = self.threads_of(c.source)
        if sparse:
            layout = gemm_sp_layout(call, self.target, threads)
        elif call.op.name == BLOCK_SCALED:
            layout = blockscaled_layout(call, self.target, threads)
        else:
            layout = gemm_layout(call, self.target, threads)
            self.n_units[c.source] = 8 if str(call.args[0].source.ty.dtype) == "float32" else 16
        if layout is None or self.layouts.get(c.source, layout) != layout:
            self.bad.add(c.source)
        else:
            self.layouts[c.source] = layout

    def threads_of(self, buf: Any) -> int:
        """The threads `buf` is spread over: the block's, or those of the warp role that alone uses it."""
        return self.role_threads.get(buf, self.threads)

    def check_tile_op(self, name: str, call: Any) -> None:
        args = list(call.args)
        for index, arg in enumerate(args):
            buf = arg.source if isinstance(arg, (tvm.ir.TensorRegion, tvm.ir.TensorLoad)) else None
            if buf not in self.layouts:
                continue
            ok = isinstance(arg, tvm.ir.TensorRegion) and full_region(arg)
            if name == "tl.gemm":
                ok = ok and index in (0, 1, 2)
            elif name == "tl.gemm_sp":
                ok = ok and index == 3
            elif name == BLOCK_SCALED:
                ok = ok and index == 2
            elif name == "tl.fill":
                ok = ok and index == 0
            elif name == "tl.copy":
                other = args[1 - index]
                ok = ok and isinstance(other, tvm.ir.TensorRegion) and len(_nonunit(other)) == 2
                if index == 1:
                    ok = ok and other.source not in self.fragments
            elif name in ("tl.reduce", "tl.atomic"):
                ok = ok and index == (0 if name == "tl.reduce" else 1)
            else:
                ok = False
            if not ok:
                self.bad.add(buf)

    def nest_ok(self, buf: Any, loops: list[Any], body: Any) -> bool:
        """Whether a ``T.Parallel`` nest touching accumulator `buf` can run over the thread's registers: it
        spans the tile, indexes every accumulator it touches by its own loop variables, the accumulators share
        one layout, and it writes no other fragment."""
        layout = self.layouts[buf]
        lvars = [lp.loop_var for lp in loops]
        loads, stores = C.collect(body, tvm.ir.TensorLoad), C.collect(body, tirx.BufferStore)
        touched = {ld.source for ld in loads if ld.source in self.layouts}
        touched |= {st.buffer for st in stores if st.buffer in self.layouts}
        other_writes = {st.buffer for st in stores if st.buffer in self.fragments} - touched
        ok = len(loops) == 2 and _static([lp.extent for lp in loops]) == [layout.m, layout.n] and not other_writes
        ok = ok and all(C.is_const(lp.min, 0) for lp in loops) and all(self.layouts[b] == layout for b in touched)
        accesses = [ld.indices for ld in loads if ld.source in touched]
        accesses += [st.indices for st in stores if st.buffer in touched]
        return ok and all(len(ix) == 2 and ix[0].same_as(lvars[0]) and ix[1].same_as(lvars[1]) for ix in accesses)

    def check_nest(self, loops: list[Any], body: Any) -> None:
        touched = {ld.source for ld in C.collect(body, tvm.ir.TensorLoad)} & set(self.layouts)
        touched |= {st.buffer for st in C.collect(body, tirx.BufferStore)} & set(self.layouts)
        if touched and not all(self.nest_ok(buf, loops, body) for buf in touched):
            self.bad.update(touched)

    def check_rest(self, rest: Any) -> None:
        for ld in C.collect(rest, tvm.ir.TensorLoad):
            if ld.source in self.layouts:
                self.bad.add(ld.source)
        for st in C.collect(rest, tirx.BufferStore):
            if st.buffer in self.layouts:
                self.bad.add(st.buffer)

    def add_followers(self, body: Any) -> set[Any]:
        """Fragments that are no gemm's accumulator but that a ``T.Parallel`` nest writes element for element
        from an accumulator (``P[i, j] = S[i, j] * scale[i]``), used by the same threads: they take the
        accumulator's layout, so the nest stays in registers (the checks then decide, as for accumulators)."""
        found: dict[Any, AccumulatorLayout | None] = {}

        def on_nest(loops: list[Any], inner: Any) -> None:
            lvars = [lp.loop_var for lp in loops]
            sources = [ld.source for ld in C.collect(inner, tvm.ir.TensorLoad) if ld.source in self.layouts
                       and len(ld.indices) == 2 and all(x.same_as(v) for x, v in zip(ld.indices, lvars))]
            for st in C.collect(inner, tirx.BufferStore):
                buf = st.buffer
                if buf not in self.fragments or buf in self.layouts or not sources or len(st.indices) != 2:
                    continue
                src = sources[0]
                lay = self.layouts[src]
                same = _static(list(buf.ty.shape)) == [lay.m, lay.n] and \
                    self.threads_of(buf) == self.threads_of(src)
                if not same or found.get(buf, lay) != lay:
                    found[buf] = None
                else:
                    found[buf] = lay

        scan_tile_program(body, on_nest, lambda name, call: None)
        followers = {b for b, lay in found.items() if lay is not None}
        for buf in followers:
            self.layouts[buf] = found[buf]  # type: ignore[assignment]
        return followers

    def final(self) -> dict[Any, AccumulatorLayout]:
        return {b: lay for b, lay in self.layouts.items() if b not in self.bad}

    def share_rows(self, reduced: set[Any]) -> None:
        """mma.sync accumulators of one height, one of them row-reduced (attention-like kernels), on one warp-row
        count where every one's tile allows it: their row vectors (`accumulator_rows`) need the same rows in the
        same threads. MLA decode's 64 x 64 scores (2 x 4 warps under FullCol) and 64 x 512 output (1 x 8) meet at
        2 x 4; otherwise the row max / sum vectors fall back to core's replicated, shared-memory path."""
        groups: dict[int, list[Any]] = {}
        for buf, lay in self.layouts.items():
            if lay.instr == MMA and buf in self.n_units and buf not in self.bad:
                groups.setdefault(lay.m, []).append(buf)
        for bufs in groups.values():
            if len({self.layouts[b].wm for b in bufs}) < 2 or not any(b in reduced for b in bufs):
                continue
            if len({self.threads_of(b) for b in bufs}) > 1:
                continue
            warps = self.threads_of(bufs[0]) // 32
            biggest = sorted(bufs, key=lambda b: -self.layouts[b].n)
            for wm in dict.fromkeys(self.layouts[b].wm for b in biggest):
                grids = [regrid(self.layouts[b], wm, warps, self.n_units[b]) for b in bufs]
                if all(g is not None for g in grids):
                    self.layouts.update(zip(bufs, grids))
                    break


def regrid(lay: AccumulatorLayout, wm: int, warps: int, n_unit: int) -> AccumulatorLayout | None:
    """`lay` over ``wm x (warps / wm)`` warps, or None where its tile does not split so."""
    if warps % wm or lay.m % (16 * wm) or lay.n % (n_unit * (warps // wm)):
        return None
    return AccumulatorLayout(lay.m, lay.n, wm, warps // wm, lay.instr)


def _check_fp8(func: Any, call: Any, target: Any) -> None:
    """An fp8 ``T.gemm`` needs the fp8 tensor-core instructions of sm_89+; below, a LoweringError says so (the
    reference 0.1.15 builds a kernel there whose MMA is CuTe's invalid-path stub)."""
    fp8 = [str(x.source.ty.dtype) for x in call.args[:2] if isinstance(x, tvm.ir.TensorRegion)
           and str(x.source.ty.dtype) in FP8_KINDS]
    if not fp8 or target is None:
        return
    major, _ = arch_of(target)
    if major < FP8_MIN_ARCH:
        arch = target.attrs.get("arch", "sm_80") if hasattr(target, "attrs") else target.get("arch")
        raise C.lowering_error(func, f"T.gemm with {fp8[0]} operands needs fp8 tensor cores (sm_89 or newer); "
                                     f"target arch {arch} has none: cast the tiles to float16 or bfloat16 "
                                     "before T.gemm, or compile for sm_89+")


def _plan(func: Any, target: Any) -> tuple[dict[Any, AccumulatorLayout], dict[Any, RowLayout],
                                           dict[Any, AccumulatorLayout]]:
    """Accumulator layouts, the row vectors that follow their rows (`accumulator_rows`) and the half copies
    that feed a gemm's A from registers (`register_operands`)."""
    plan = _Plan(func, target)
    reduced: set[Any] = set()
    for ev in C.collect(func.body, tirx.Evaluate):
        found = C.tile_op_of(ev)
        if found is not None and found[0] == "tl.reduce" and isinstance(found[1].args[0], tvm.ir.TensorRegion):
            reduced.add(found[1].args[0].source)
        if found is not None and found[0] == "tl.gemm":
            _check_fp8(func, found[1], target)
            plan.add_gemm(found[1])
        elif found is not None and found[0] == BLOCK_SCALED:
            plan.add_gemm(found[1])
        elif found is not None and found[0] == "tl.gemm_sp":
            plan.add_gemm(found[1], sparse=True)
    if not plan.layouts:
        return {}, {}, {}
    plan.share_rows(reduced)
    followers = plan.add_followers(func.body)
    settled = set(plan.bad)  # accumulators of gemms that disagree on their layout
    while True:
        plan.bad = set(settled)
        plan.check_rest(scan_tile_program(func.body, plan.check_nest, plan.check_tile_op))
        dropped = followers & plan.bad
        if not dropped:  # a follower with a use the registers cannot serve stays a fragment; check again
            break
        followers -= dropped
        for buf in dropped:
            del plan.layouts[buf]
    final = plan.final()
    if final:
        plan.layouts = final

        def accumulator_nest_ok(loops: list[Any], body: Any) -> bool:
            touched = [b for b in final if _touches(body, b)]
            return bool(touched) and all(plan.nest_ok(b, loops, body) for b in touched)

        # row vectors and register A operands follow the m16n8 register layouts only
        mma = {b: lay for b, lay in final.items() if lay.instr not in VOLTA}
        rows = plan_rows(func.body, plan.fragments, mma, accumulator_nest_ok)
        operands = plan_register_operands(func.body, plan.fragments, mma)
    else:
        rows, operands = {}, {}
    return final, rows, operands


class _Rewriter:
    def __init__(self, func: Any, layouts: dict[Any, AccumulatorLayout], rows: dict[Any, RowLayout],
                 operands: dict[Any, AccumulatorLayout]):
        self.layouts = layouts
        self.regs = {b: tirx.decl_buffer((lay.regs,), str(b.ty.dtype), name=f"{b.name}_acc", scope="local")
                     for b, lay in layouts.items()}
        self.operands = operands
        self.operand_regs = {b: tirx.decl_buffer((lay.regs,), str(b.ty.dtype), name=f"{b.name}_regs",
                                                 scope="local") for b, lay in operands.items()}
        self.tid = C.linear_thread(func)
        self.rows = RowRewriter(rows, self.tid)

    def per_thread(self, buf: Any, make: Any) -> Any:
        layout = self.layouts[buf]
        r = tirx.Var("r", "int32")
        row, col = layout.position(self.tid, r)
        return tirx.For(r, 0, layout.regs, tirx.ForKind.UNROLLED, make(r, row, col))

    def reg_region(self, buf: Any) -> Any:
        return tirx.BufferRegion(self.regs[buf], [tvm.ir.Range.from_min_extent(0, self.layouts[buf].regs)])

    def stage(self, region: Any) -> tuple[list[Any], Any]:
        """Shared copy of an accumulator, for ops that read it across threads."""
        buf = region.source
        if buf not in self.layouts:
            return [], region
        scratch = C.buffer_with(buf, scope="shared.dyn", name=f"{buf.name}_stage")
        regs = self.regs[buf]
        fill = self.per_thread(buf, lambda r, i, j: tirx.BufferStore(scratch, tirx.BufferLoad(regs, [r]), [i, j]))
        return [tirx.AllocBuffer(scratch), fill], tirx.BufferRegion(scratch, list(region.region))

    def tile_op(self, name: str, call: Any) -> Any:
        args = list(call.args)
        lowered = self.rows.tile_op(name, call, self.regs, self.layouts)
        if lowered is not None:
            return lowered
        if name == "tl.copy" and args[1].source in self.operands:  # the per-register cast into an A operand
            src, dst = self.regs[args[0].source], self.operand_regs[args[1].source]
            dtype = str(dst.ty.dtype)
            return self.per_thread(args[0].source, lambda r, i, j: tirx.BufferStore(
                dst, cast_to(dtype, tirx.BufferLoad(src, [r])), [r]))
        if name == "tl.fill" and args[0].source in self.layouts:
            buf = args[0].source
            value = cast_to(str(buf.ty.dtype), args[1])
            return self.per_thread(buf, lambda r, i, j: tirx.BufferStore(self.regs[buf], value, [r]))
        if name == "tl.copy" and args[0].source in self.layouts and args[1].source not in self.layouts:
            if C.scope_of(args[1].source) != FRAGMENT:
                return self.copy_out(args[0].source, args[1])
        if name == "tl.copy" and args[1].source in self.layouts:
            return self.copy_in(args[0], args[1].source)
        pre: list[Any] = []
        new_args = list(args)
        for index, arg in enumerate(args):
            if isinstance(arg, tvm.ir.TensorRegion) and arg.source in self.layouts:
                if name == BLOCK_SCALED and index == 2:
                    new_args = [*args[:2], self.reg_region(arg.source), *args[3:BLOCK_SCALED_ARGS]]
                    new_args += [tirx.IntImm("int32", v) for v in self.layouts[arg.source].to_args()]
                    break
                if name == "tl.gemm" and index == 2:
                    new_args[2] = self.reg_region(arg.source)
                    new_args = new_args[:7] + [tirx.IntImm("int32", v) for v in self.layouts[arg.source].to_args()]
                    a = args[0].source
                    if a in self.operands:  # A from registers: its region, then its layout
                        new_args[0] = tirx.BufferRegion(self.operand_regs[a], [
                            tvm.ir.Range.from_min_extent(0, self.operands[a].regs)])
                        new_args += [tirx.IntImm("int32", v) for v in self.operands[a].to_args()]
                    continue
                if name == "tl.gemm_sp" and index == 3:
                    new_args[3] = self.reg_region(arg.source)
                    new_args = new_args[:9] + [tirx.IntImm("int32", v) for v in self.layouts[arg.source].to_args()]
                    continue
                stmts, new_args[index] = self.stage(arg)
                pre.extend(stmts)
        return C.seq([*pre, tirx.Evaluate(tvm.ir.Call(call.op, new_args, ret_ty="void"))])

    def copy_out(self, buf: Any, dst: Any) -> Any:
        dims = _nonunit(dst)
        dtype = str(dst.source.ty.dtype)

        def body(r: Any, i: Any, j: Any) -> Any:
            idx = [rg.min for rg in dst.region]
            idx[dims[0]] = C.add(idx[dims[0]], i)
            idx[dims[1]] = C.add(idx[dims[1]], j)
            store = tirx.BufferStore(dst.source, cast_to(dtype, tirx.BufferLoad(self.regs[buf], [r])), idx)
            return _guard(dst.source, idx, store)

        return self.per_thread(buf, body)

    def copy_in(self, src: Any, buf: Any) -> Any:
        dims = _nonunit(src)
        dtype = str(buf.ty.dtype)

        def body(r: Any, i: Any, j: Any) -> Any:
            idx = [rg.min for rg in src.region]
            idx[dims[0]] = C.add(idx[dims[0]], i)
            idx[dims[1]] = C.add(idx[dims[1]], j)
            value = cast_to(dtype, tirx.BufferLoad(src.source, idx))
            cond = _bounds(src.source, idx)
            if cond is not None:
                value = tirx.if_then_else(cond, value, tirx.const(0, dtype))
            return tirx.BufferStore(self.regs[buf], value, [r])

        return self.per_thread(buf, body)

    def nest(self, loops: list[Any], body: Any) -> Any:
        """A nest over the accumulators (one layout) runs per register; row vectors read their row's slot."""
        buf = next(b for b in self.layouts if _touches(body, b))
        layout = self.layouts[buf]
        touched = [b for b in self.layouts if _touches(body, b)]

        def on_load(ld: Any) -> Any:
            return tirx.BufferLoad(self.regs[ld.source], [self._r]) if ld.source in touched else ld

        def on_store(st: Any) -> Any:
            return tirx.BufferStore(self.regs[st.buffer], st.value, [self._r]) if st.buffer in touched else st

        def make(r: Any, i: Any, j: Any) -> Any:
            self._r = r
            mapped = tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
            mapped = self.rows.map_slot(mapped, slot_of(layout, r))
            return C.substitute(mapped, {loops[0].loop_var: i, loops[1].loop_var: j})

        return self.per_thread(buf, make)


def _touches(body: Any, buf: Any) -> bool:
    return any(ld.source.same_as(buf) for ld in C.collect(body, tvm.ir.TensorLoad)) or any(
        st.buffer.same_as(buf) for st in C.collect(body, tirx.BufferStore))


def _bounds(buf: Any, idx: list[Any]) -> Any:
    ana = tvm.sym.Analyzer()
    conds = [i < s for i, s in zip(idx, buf.ty.shape) if not ana.can_prove(i < s)]
    if not conds:
        return None
    cond = conds[0]
    for extra in conds[1:]:
        cond = tirx.And(cond, extra)
    return cond


def _guard(buf: Any, idx: list[Any], stmt: Any) -> Any:
    cond = _bounds(buf, idx)
    return stmt if cond is None else tirx.IfThenElse(cond, stmt, None)


def MMAAccumulators(target: Any = None) -> tvm.transform.Pass:
    """Put tensor-core gemm accumulators in registers (see the module docstring)."""

    @C.prim_func_pass("cuda.mma_accumulators")
    def mma_accumulators(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else func.attrs.get("target")
        layouts, rows, operands = _plan(func, tgt)
        if not layouts:
            return func
        rw = _Rewriter(func, layouts, rows, operands)

        def on_for(loop: Any, mutator: Any) -> Any:
            if C.is_parallel(loop):
                loops, body = C.parallel_nest(loop)
                if any(_touches(body, b) for b in layouts):
                    return rw.nest(loops, body)
                if rw.rows.touches(body):
                    return rw.rows.nest(loops, body)
                return loop
            return mutator.default_mutate(loop)

        def on_eval(ev: Any, mutator: Any) -> Any:
            found = C.tile_op_of(ev)
            return ev if found is None else rw.tile_op(*found)

        def on_alloc(alloc: Any) -> Any:
            if alloc.buffer in rows:
                return rw.rows.alloc(alloc.buffer)
            if alloc.buffer in operands:
                return tirx.AllocBuffer(rw.operand_regs[alloc.buffer])
            return tirx.AllocBuffer(rw.regs[alloc.buffer]) if alloc.buffer in layouts else alloc

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.Evaluate, on_eval)])
        body = tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc))
        return C.with_body(func, body)

    return mma_accumulators
