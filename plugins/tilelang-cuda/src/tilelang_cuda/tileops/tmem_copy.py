"""``T.copy`` out of tensor memory (sm_100a): a warpgroup reads its accumulator rows with ``tcgen05.ld``.

Thread ``t`` of the first warpgroup (of the block, or of the warp-role branch the copy sits in: ``if 128 <= tx <
256``) owns datapath (row) ``t``: it loads its row's columns in chunks of 32
(``tcgen05.ld.32x32b``, warp ``w`` addressing datapaths ``32w..``) into registers and stores them, converted to the
destination's dtype, to a shared or global tile (`tilelang_cuda.passes.tensor_memory` routes fragment destinations
through a shared tile). The copy starts with ``tcgen05.fence::after_thread_sync`` (the MMAs it reads were awaited
through an mbarrier).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.transform import utils as C
from tilelang_cuda.passes.tensor_memory import TMEM_SCOPE, slot_of
from tilelang_cuda.tileops.common import extern, is_cuda

CHUNK = 32


def _applies(ctx: Any) -> bool:
    try:
        src, dst = ctx.regions(0, 1)
    except Exception:
        return False
    return C.scope_of(src.source) == TMEM_SCOPE and C.scope_of(dst.source) in ("shared", "shared.dyn", "global")


def lower_tmem_copy(ctx: Any) -> Any:
    from tilelang_cuda.tileops.dialect.requirements import TCGEN05, require

    require(ctx, TCGEN05)
    src, dst = ctx.regions(0, 1)
    ext = [C.as_int(r.extent) for r in src.region]
    if None in ext or ext[-2] != 128:
        raise ctx.error(f"copies whole 128-row TMEM tiles out of tensor memory; got extents {ext}")
    slot, _ = slot_of(ctx.func, src.source)
    base = tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)])
    shape = [C.as_int(s) for s in src.source.ty.shape]
    lead = 0
    stride = shape[-1]
    for d in range(len(shape) - 3, -1, -1):  # leading modes continue along the columns
        lead = lead + src.region[d].min * stride
        stride *= shape[d]
    col0 = lead + src.region[-1].min
    n = ext[-1]
    tid = C.linear_thread(ctx.func)
    begin, count = ctx.thread_range or (0, ctx.num_threads)
    if count < 128 or begin % 128:
        raise ctx.error(f"reads TMEM with a warpgroup (128 threads from a multiple of 128); the branch it sits in "
                        f"runs threads [{begin}, {begin + count})")
    tid = tid - begin if begin else tid
    row = tirx.floormod(tid, 128)
    warp = tirx.floordiv(row, 32)
    dnon = [d for d, r in enumerate(dst.region) if not C.is_const(r.extent, 1)]
    if len(dnon) != 2:
        raise ctx.error(f"copies a TMEM tile into a 2-D destination region; got {dst}")
    regs = tirx.decl_buffer((min(CHUNK, n),), "uint32", name="tmem_regs", scope="local")
    out = [extern("tl_tcgen05_after_thread_sync")]
    chunk = min(CHUNK, n)
    if n % chunk:
        raise ctx.error(f"copies TMEM columns in chunks of {chunk}; {n} columns is not a multiple")
    vdtype = str(src.source.ty.dtype)
    ddtype = str(dst.source.ty.dtype)
    for c in range(n // chunk):
        taddr = base + tirx.Cast("uint32", tirx.shift_left(warp * 32, 16) + col0 + c * chunk)
        out.append(extern("tl_tcgen05_ld_32x32b_n", chunk, taddr,
                          tirx.address_of(tirx.BufferLoad(regs, [tirx.IntImm("int32", 0)]))))
        for j in range(chunk):
            value = tirx.reinterpret(vdtype, tirx.BufferLoad(regs, [tirx.IntImm("int32", j)]))
            idx = [r.min for r in dst.region]
            idx[dnon[0]] = idx[dnon[0]] + row
            idx[dnon[1]] = idx[dnon[1]] + c * chunk + j
            out.append(tirx.BufferStore(dst.source, value if vdtype == ddtype else tirx.Cast(ddtype, value), idx))
    body = C.seq([tirx.AllocBuffer(regs), *out])
    if count > 128:
        body = tirx.IfThenElse(tirx.floordiv(tid, 128) == 0, body, None)
    sync = tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
    return C.seq([body, sync]) if C.scope_of(dst.source) != "global" else body


TMEM_COPY = TileOpImpl("tl.copy", "cuda_tmem_copy", lower_tmem_copy, supports_target=is_cuda, applies=_applies,
                       priority=30)
