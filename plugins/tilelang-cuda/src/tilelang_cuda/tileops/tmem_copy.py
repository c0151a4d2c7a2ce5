"""``T.copy`` out of and into tensor memory (sm_100a): a warpgroup reads or writes its tile rows with
``tcgen05.ld`` / ``tcgen05.st``.

Thread ``t`` of the first warpgroup (of the block, or of the warp-role branch the copy sits in: ``if 128 <= tx <
256``) owns datapath (row) ``t``: it moves its row's 32-bit columns in chunks of 32 (``.32x32b``, warp ``w``
addressing datapaths ``32w..``) between registers and a shared or global tile, converting to the other side's dtype
(`tilelang_cuda.passes.tensor_memory` routes fragments through a shared tile), or the thread's own registers of
its row (``local``, `tilelang_cuda.passes.tmem_fragments`: every warpgroup of the branch moves its share of the
columns, no barrier follows). A 16-bit TMEM tile holds two
elements a column, the even one in the low half, so the registers are a 16-bit array of twice the columns.

Out of TMEM the copy starts with ``tcgen05.fence::after_thread_sync`` (the MMAs it reads were awaited through an
mbarrier); into TMEM it waits for its stores (``tcgen05.wait::st``, in the helper) and ends with
``tcgen05.fence::before_thread_sync`` and a barrier of the calling threads, so an MMA that one of them issues next
(or one issued after an mbarrier the program arrives on) reads them. A copy into shared memory ends with that
barrier too (the next statement may read any row).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.transform import utils as C
from tilelang_cuda.passes.tensor_memory import TMEM_SCOPE, per_column, slot_of
from tilelang_cuda.tileops.common import extern, is_cuda

CHUNK = 32
_OTHER = ("shared", "shared.dyn", "global", "local")  # local: a thread's registers of its row (TmemFragments)


def _applies(ctx: Any) -> bool:
    try:
        src, dst = ctx.regions(0, 1)
    except Exception:
        return False
    scopes = (C.scope_of(src.source), C.scope_of(dst.source))
    return (scopes[0] == TMEM_SCOPE and scopes[1] in _OTHER) or (scopes[1] == TMEM_SCOPE and scopes[0] in _OTHER)


def lower_tmem_copy(ctx: Any) -> Any:
    from tilelang_cuda.tileops.dialect.requirements import TCGEN05, require

    require(ctx, TCGEN05)
    src, dst = ctx.regions(0, 1)
    into = C.scope_of(dst.source) == TMEM_SCOPE
    tmem, other = (dst, src) if into else (src, dst)
    verb = "writes" if into else "reads"
    ext = [C.as_int(r.extent) for r in tmem.region]
    if None in ext or ext[-2] != 128:
        raise ctx.error(f"copies whole 128-row TMEM tiles {'into' if into else 'out of'} tensor memory; got extents "
                        f"{ext}")
    slot, _ = slot_of(ctx.func, tmem.source)
    base = tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)])
    shape = [C.as_int(s) for s in tmem.source.ty.shape]
    lead = 0
    stride = shape[-1]
    for d in range(len(shape) - 3, -1, -1):  # leading modes continue along the columns
        lead = lead + tmem.region[d].min * stride
        stride *= shape[d]
    pack = per_column(tmem.source)
    first = lead + tmem.region[-1].min  # in elements
    n = ext[-1]
    if n % pack or (C.as_int(first) is not None and C.as_int(first) % pack):
        raise ctx.error(f"{tmem.source.ty.dtype} TMEM tiles hold two elements a column; the copied columns must "
                        f"start and end on an even element (got {n} from {first})")
    col0, ncols = tirx.floordiv(first, pack) if pack > 1 else first, n // pack
    tid = C.linear_thread(ctx.func)
    begin, count = ctx.thread_range or (0, ctx.num_threads)
    if count < 128 or begin % 128:
        raise ctx.error(f"{verb} TMEM with a warpgroup (128 threads from a multiple of 128); the branch it sits in "
                        f"runs threads [{begin}, {begin + count})")
    tid = tid - begin if begin else tid
    row = tirx.floormod(tid, 128)
    warp = tirx.floordiv(row, 32)
    onon = [d for d, r in enumerate(other.region) if not C.is_const(r.extent, 1)]
    registers = C.scope_of(other.source) == "local"  # the thread's own row: indexed by column only
    if registers:
        onon = [None, *onon]
    if len(onon) != 2:
        raise ctx.error(f"copies a TMEM tile {'from' if into else 'into'} a 2-D region; got {other}")
    chunk = min(CHUNK, ncols)
    if ncols % chunk:
        raise ctx.error(f"copies TMEM columns in chunks of {chunk}; {ncols} columns is not a multiple")
    vdtype, odtype = str(tmem.source.ty.dtype), str(other.source.ty.dtype)
    # the registers of one chunk: 32-bit words, or 16-bit halves two a word
    regs = tirx.decl_buffer((chunk * pack,), "uint32" if pack == 1 else vdtype, name="tmem_regs", scope="local")
    regs_ptr = tirx.address_of(tirx.BufferLoad(regs, [tirx.IntImm("int32", 0)]))

    def other_index(j: Any) -> list[Any]:
        idx = [r.min for r in other.region]
        if not registers:
            idx[onon[0]] = idx[onon[0]] + row
        idx[onon[1]] = idx[onon[1]] + j
        return idx

    def as_tmem(value: Any) -> Any:  # a value of the other side as it is held in TMEM's registers
        value = value if odtype == vdtype else tirx.Cast(vdtype, value)
        return tirx.reinterpret("uint32", value) if pack == 1 and vdtype != "uint32" else value

    out = [] if into else [extern("tl_tcgen05_after_thread_sync")]
    direct = registers and vdtype == odtype  # the thread's own registers, TMEM's dtype: no copy between them
    for c in range(ncols // chunk):
        taddr = base + tirx.Cast("uint32", tirx.shift_left(warp * 32, 16) + col0 + c * chunk)
        if direct:
            at = tirx.address_of(tirx.BufferLoad(other.source, other_index(c * chunk * pack)))
            name = "tl_tcgen05_st_32x32b_n" if into else "tl_tcgen05_ld_32x32b_n"
            out.append(extern(name, chunk, taddr, at))
            continue
        moves = []
        for j in range(chunk * pack):
            reg = tirx.BufferLoad(regs, [tirx.IntImm("int32", j)])
            at = other_index(c * chunk * pack + j)
            if into:
                moves.append(tirx.BufferStore(regs, as_tmem(tirx.BufferLoad(other.source, at)), [j]))
            else:
                value = tirx.reinterpret(vdtype, reg) if pack == 1 else reg
                moves.append(tirx.BufferStore(other.source, value if vdtype == odtype else tirx.Cast(odtype, value),
                                              at))
        if into:
            out += [*moves, extern("tl_tcgen05_st_32x32b_n", chunk, taddr, regs_ptr)]
        else:
            out += [extern("tl_tcgen05_ld_32x32b_n", chunk, taddr, regs_ptr), *moves]
    if into:
        out.append(extern("tl_tcgen05_before_thread_sync"))
    body = C.seq(out if direct else [tirx.AllocBuffer(regs), *out])
    if count > 128 and not registers:  # registers: each warpgroup moves its own columns of its rows
        body = tirx.IfThenElse(tirx.floordiv(tid, 128) == 0, body, None)
    sync = tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
    return C.seq([body, sync]) if C.scope_of(dst.source) not in ("global", "local") else body


TMEM_COPY = TileOpImpl("tl.copy", "cuda_tmem_copy", lower_tmem_copy, supports_target=is_cuda, applies=_applies,
                       priority=30)
