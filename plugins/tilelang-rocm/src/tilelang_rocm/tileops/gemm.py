"""``tl.gemm`` on AMD GPUs: MFMA (CDNA) or WMMA (RDNA3) 16x16 tiles, operands read from LDS.

The block's wavefronts split C into a ``wm x wn`` grid of rectangles of 16x16 tiles. Per call, C goes through
an LDS tile once (the fragment keeps core's thread layout outside the gemm): each lane loads its accumulator
elements (or zeros), walks K one instruction-step at a time gathering its A and B elements from LDS (any
transposition is just a different gather), issues one matrix instruction per tile and writes C back.
Accumulates in fp32; M, N multiples of 16; K a multiple of the instruction's K; A and B shared or fragments.
Operands: fp16 and bf16 everywhere, fp32 on CDNA (`tilelang_rocm.matrix_cores`). bf16 instructions take i16
bit patterns; TVM's bf16 legalization has widened the tiles to fp32 by then, so the bits are the fp32 value's
high half (exact: the value came from bf16).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import TileOpImpl, gemm_operands, operand_index
from tilelang.transform import utils as C
from tilelang_rocm.limits import lds_buffers, lds_limit, padded, stored_bytes
from tilelang_rocm.matrix_cores import MatrixCore, matrix_core

MAX_TILES = 16  # 16x16 accumulator tiles a wavefront holds at once
LDS_BUDGET = 32 * 1024  # at most, bytes of the C staging tile; less when the kernel's other LDS arrays need room


def _ints(values: Any) -> list[int] | None:
    out = [C.as_int(v) for v in values]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _mcpu(ctx: Any) -> str:
    return str(ctx.target.attrs.get("mcpu", "")) if hasattr(ctx.target, "attrs") else str(ctx.target.get("mcpu"))


def _core(ctx: Any) -> MatrixCore | None:
    return matrix_core(_mcpu(ctx), str(ctx.region(0).source.ty.dtype))


def _shape(ctx: Any) -> tuple[int, int, int] | None:
    a, _, c, ta, _, _ = gemm_operands(ctx)
    dims = _ints([c.region[-2].extent, c.region[-1].extent, a.region[-2].extent if ta else a.region[-1].extent])
    return None if dims is None else (dims[0], dims[1], dims[2])


def applies(ctx: Any) -> bool:
    """A matrix instruction exists for this GPU and dtype, shapes tile, C is an fp32 fragment."""
    try:
        core = _core(ctx)
        a, b, c, *_ = gemm_operands(ctx)
        shape = _shape(ctx)
    except Exception:
        return False
    if core is None or not ctx.has_threads or ctx.num_threads % core.wave or shape is None:
        return False
    if str(b.source.ty.dtype) != core.operand_dtype or str(c.source.ty.dtype) != "float32":
        return False
    if shape[0] % 16 or shape[1] % 16 or shape[2] % core.k:
        return False
    if C.scope_of(c.source) != "local.fragment" or _ints(c.source.ty.shape) is None:
        return False
    return all(C.scope_of(r.source) != "local" for r in (a, b))


def warp_grid(tiles_m: int, tiles_n: int, waves: int, policy: int = 0) -> tuple[int, int]:
    """``(wm, wn)`` wavefronts along M and N: each divides its tile count, the most waves, squarest blocks."""
    best: tuple[Any, ...] | None = None
    for wm in range(1, waves + 1):
        for wn in range(1, waves // wm + 1):
            if tiles_m % wm or tiles_n % wn:
                continue
            lean = {1: -wm, 2: -wn}.get(policy, 0)
            key = (-(wm * wn), lean, abs(tiles_m // wm - tiles_n // wn), wm)
            if best is None or key < best[0]:
                best = (key, wm, wn)
    assert best is not None
    return best[1], best[2]


def _stage(region: Any) -> tuple[list[Any], Any]:
    """Fragments are copied to an LDS tile (a parallel nest over the whole buffer) so every lane can read them."""
    buf = region.source
    if C.scope_of(buf) in ("shared", "shared.dyn"):
        return [], region
    lds = C.buffer_with(buf, scope="shared.dyn", name=f"{buf.name}_lds")
    fill = C.make_parallel_nest(list(buf.ty.shape), lambda vs: tirx.BufferStore(lds, tirx.BufferLoad(buf, vs), vs))
    return [tirx.AllocBuffer(lds), fill], tirx.BufferRegion(lds, list(region.region))


def _unrolled(n: int, name: str, body: Any) -> Any:
    v = tirx.Var(name, "int32")
    return tirx.For(v, 0, n, tirx.ForKind.UNROLLED, body(v))


def _vec(buf: Any, base: Any, lanes: int) -> list[Any]:
    return [tirx.Ramp(base, 1, lanes)] if lanes > 1 else [base]


def _lds_left(ctx: Any, staging: list[Any]) -> int:
    """Bytes of LDS the kernel's other arrays (bfloat16 ones count as the float32 arrays they become) and this
    gemm's operand staging tiles leave for C's staging tile."""
    used = sum(size for *_, size in lds_buffers(ctx.func, widen_bf16=True))
    used += sum(stored_bytes(s.buffer, widen_bf16=True) or 0 for s in staging if isinstance(s, tirx.AllocBuffer))
    return lds_limit(_mcpu(ctx)) - used


def lower_gemm(ctx: Any) -> Any:
    core = _core(ctx)
    assert core is not None
    a, b, c, ta, tb, clear = gemm_operands(ctx)
    m, n, k = _shape(ctx)  # type: ignore[misc]
    pre_a, a = _stage(a)
    pre_b, b = _stage(b)
    waves = ctx.num_threads // core.wave
    # C goes through LDS in chunks of `span` rows when the whole tile would not fit the budget
    budget = min(LDS_BUDGET, _lds_left(ctx, [*pre_a, *pre_b]))
    span = max([r for r in range(16, m + 1, 16) if m % r == 0 and padded(r * n * 4) <= budget] or [16])
    chunks = m // span
    m = span
    wm, wn = warp_grid(m // 16, n // 16, waves, ctx.int_arg(5))
    tm, tn = m // 16 // wm, n // 16 // wn
    rows = max(d for d in range(1, tm + 1) if tm % d == 0 and d * tn <= max(MAX_TILES, tn))
    passes = tm // rows

    tid = C.linear_thread(ctx.func)
    wave, lane = tirx.floordiv(tid, core.wave), tirx.floormod(tid, core.wave)
    if wm * wn < waves:  # spare wavefronts repeat a busy one's work (same values): barriers stay uniform
        wave = tirx.floormod(wave, wm * wn)
    wr, wc = tirx.floordiv(wave, wn), tirx.floormod(wave, wn)
    name = str(c.source.name)
    ch = tirx.Var("ch", "int32")
    c_lds = tirx.decl_buffer((m, n), "float32", name=f"{name}_lds", scope="shared.dyn")
    acc = tirx.decl_buffer((rows * tn * core.c_lanes,), "float32", name=f"{name}_acc", scope="local")
    frag_dtype = core.bits_dtype or core.operand_dtype
    a_frag = tirx.decl_buffer((rows * core.a_lanes,), frag_dtype, name=f"{name}_a", scope="local")
    b_frag = tirx.decl_buffer((tn * core.a_lanes,), frag_dtype, name=f"{name}_b", scope="local")

    def operand(value: Any) -> Any:
        """bf16 -> its bit pattern. TVM's bf16 legalization widens bf16 tiles to fp32 (exactly), so the bits
        are taken from the fp32 value: its high half."""
        if not core.bits_dtype:
            return value
        wide = tirx.reinterpret("uint32", tirx.Cast("float32", value))
        return tirx.Cast(core.bits_dtype, tirx.shift_right(wide, tirx.const(16, "uint32")))
    vtype = f"float32x{core.c_lanes}"

    def one_pass(p: Any) -> Any:
        row0, col0 = (wr * tm + p * rows) * 16, wc * tn * 16

        def c_elem(i: Any, j: Any, v: int) -> tuple[list[Any], list[Any]]:
            r, q = core.c_at(lane, v)
            return [row0 + i * 16 + r, col0 + j * 16 + q], [(i * tn + j) * core.c_lanes + v]

        def per_c(body: Any) -> Any:
            return _unrolled(rows, "i", lambda i: _unrolled(tn, "j", lambda j: C.seq(
                [body(*c_elem(i, j, v)) for v in range(core.c_lanes)])))

        init = per_c(lambda at, reg: tirx.BufferStore(
            acc, tirx.const(0, "float32") if clear else tirx.BufferLoad(c_lds, at), reg))
        store = per_c(lambda at, reg: tirx.BufferStore(c_lds, tirx.BufferLoad(acc, reg), at))

        def k_step(kk: Any) -> Any:
            def gather(frag: Any, region: Any, trans: bool, layout: Any, at: Any) -> Any:
                return lambda t: C.seq([tirx.BufferStore(frag, operand(tirx.BufferLoad(region.source, operand_index(
                    region, *at(t, *layout(lane, v)), trans))), [t * core.a_lanes + v]) for v in range(core.a_lanes)])

            load_a = gather(a_frag, a, ta, core.a_at,
                            lambda i, r, q: (ch * span + row0 + i * 16 + r, kk * core.k + q))
            load_b = gather(b_frag, b, tb, core.b_at, lambda j, r, q: (kk * core.k + r, col0 + j * 16 + q))

            def mma(i: Any, j: Any) -> Any:
                at = _vec(acc, (i * tn + j) * core.c_lanes, core.c_lanes)
                call = tirx.call_llvm_pure_intrin(
                    vtype, core.intrinsic, tirx.BufferLoad(a_frag, _vec(a_frag, i * core.a_lanes, core.a_lanes)),
                    tirx.BufferLoad(b_frag, _vec(b_frag, j * core.a_lanes, core.a_lanes)),
                    tirx.BufferLoad(acc, at), *[tirx.const(x, "int32") for x in core.extra_args])
                return tirx.BufferStore(acc, call, at)

            return C.seq([_unrolled(rows, "i", load_a), _unrolled(tn, "j", load_b),
                          _unrolled(rows, "i", lambda i: _unrolled(tn, "j", lambda j: mma(i, j)))])

        kk = tirx.Var("kk", "int32")
        return C.seq([init, tirx.For(kk, 0, k // core.k, tirx.ForKind.SERIAL, k_step(kk)), store])

    p = tirx.Var("p", "int32")
    mfma = C.seq([tirx.AllocBuffer(acc), tirx.AllocBuffer(a_frag), tirx.AllocBuffer(b_frag),
                  tirx.For(p, 0, passes, tirx.ForKind.SERIAL, one_pass(p))])

    def c_index(vs: list[Any]) -> list[Any]:
        return operand_index(c, vs[0], vs[1], False)

    def chunk_nest(make: Any) -> Any:
        """A nest over all of C (so it keeps the fragment's thread layout) touching the rows of chunk `ch`."""
        def body(vs: list[Any]) -> Any:
            local = [vs[0] - ch * span, vs[1]]
            stmt = make(vs, local)
            return stmt if chunks == 1 else tirx.IfThenElse(
                tirx.And(vs[0] >= ch * span, vs[0] < ch * span + span), stmt, None)
        return C.make_parallel_nest([m * chunks, n], body)

    stmts = []
    if not clear:
        stmts.append(chunk_nest(lambda vs, loc: tirx.BufferStore(c_lds, tirx.BufferLoad(c.source, c_index(vs)), loc)))
    stmts.append(mfma)
    stmts.append(chunk_nest(lambda vs, loc: tirx.BufferStore(c.source, tirx.BufferLoad(c_lds, loc), c_index(vs))))
    loop = tirx.For(ch, 0, chunks, tirx.ForKind.SERIAL, C.seq(stmts))
    return C.seq([*pre_a, *pre_b, tirx.AllocBuffer(c_lds), loop])


GEMM = TileOpImpl("tl.gemm", "rocm_matrix_core", lower_gemm, applies=applies, priority=10)
