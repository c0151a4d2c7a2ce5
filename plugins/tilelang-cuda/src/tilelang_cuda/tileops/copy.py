"""``tl.copy`` global -> shared with ``cp.async`` (sm_80+): 16-byte asynchronous copies, zero-filled tails.

Applies when both sides have the same dtype, static extents, a contiguous innermost dimension whose extent,
start and row length are multiples of 16 bytes (so each vector is wholly inside or outside the source).
Threads take vectors cyclically; out-of-bounds vectors copy 0 bytes (cp.async fills the 16 bytes with
zeros). The copy waits for its group before the closing barrier, so consumers see a plain shared tile.

On sm_90a (`tma_enabled`) a copy that is one TMA box of a 2-D tensor (`_tma_plan`) is instead one
``cp.async.bulk.tensor`` issued by thread 0 and awaited on an mbarrier (`tilelang_cuda.tma`);
AsyncCopyPipeline overlaps those of pipelined loops.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import dtype_bits, dtype_bytes
from tilelang.layout import unravel
from tilelang.transform import utils as C
from tilelang_cuda.tileops.common import addr, arch_number, extern, is_cuda, sync

VECTOR_BYTES = 16


def _plan(ctx: Any) -> tuple[Any, Any, list[int], int] | None:
    try:
        src, dst = ctx.regions(0, 1)
    except Exception:
        return None
    if C.scope_of(src.source) != "global" or C.scope_of(dst.source) not in ("shared", "shared.dyn"):
        return None
    dtype = str(src.source.ty.dtype)
    if dtype != str(dst.source.ty.dtype) or arch_number(ctx.target) < 80:
        return None
    vec = VECTOR_BYTES * 8 // int(dtype_bits(dtype))  # elements per 16-byte vector (32 of a 4-bit type)
    sdims = [d for d, r in enumerate(src.region) if not C.is_const(r.extent, 1)]
    ddims = [d for d, r in enumerate(dst.region) if not C.is_const(r.extent, 1)]
    sext = [C.as_int(src.region[d].extent) for d in sdims]
    dext = [C.as_int(dst.region[d].extent) for d in ddims]
    if not sdims or sext != dext or None in sext or sdims[-1] != len(src.region) - 1:
        return None
    if ddims[-1] != len(dst.region) - 1 or sext[-1] % vec:
        return None
    for region in (src, dst):
        row = C.as_int(region.source.ty.shape[-1])
        if row is None or row % vec or not ctx.analyzer.can_prove(region.region[-1].min % vec == 0):
            return None
    return src, dst, sext, vec


def _applies(ctx: Any) -> bool:
    return _plan(ctx) is not None


def lower_copy(ctx: Any) -> Any:
    src, dst, ext, vec = _plan(ctx)  # type: ignore[misc]
    sdims = [d for d, r in enumerate(src.region) if not C.is_const(r.extent, 1)]
    ddims = [d for d, r in enumerate(dst.region) if not C.is_const(r.extent, 1)]
    vec_ext = [*ext[:-1], ext[-1] // vec]
    total = 1
    for e in vec_ext:
        total *= e
    # inside a warp role only its threads [begin, begin + count) copy (a warp-specialised kernel's consumers)
    begin, threads = ctx.thread_range or (0, ctx.num_threads)
    tid = C.linear_thread(ctx.func) - begin if begin else C.linear_thread(ctx.func)
    k = tirx.Var("k", "int32")
    flat = k * threads + tid
    pos = unravel(flat, vec_ext)
    pos[-1] = pos[-1] * vec

    def indices(region: Any, dims: list[int]) -> list[Any]:
        idx = [r.min for r in region.region]
        for d, p in zip(dims, pos):
            idx[d] = C.add(idx[d], p)
        return idx

    si, di = indices(src, sdims), indices(dst, ddims)
    inside = ctx.in_bounds(src.source, si)
    nbytes: Any = VECTOR_BYTES
    if inside is not None:  # out-of-bounds vectors read nothing from a clamped (valid) address
        nbytes = tirx.if_then_else(inside, VECTOR_BYTES, 0)
        si = [tirx.if_then_else(inside, i, 0) for i in si]
    body = extern("tl_cp_async16", addr(dst.source, di, rw=2), addr(src.source, si), nbytes)
    if total % threads:
        body = tirx.IfThenElse(flat < total, body, None)
    loop = tirx.For(k, 0, (total + threads - 1) // threads, tirx.ForKind.UNROLLED, body)
    return C.seq([sync(), loop, extern("tl_cp_async_commit"), extern("tl_cp_async_wait_group", 0), sync()])


def tma_enabled(target: Any) -> bool:
    """TMA copies: sm_90a (not plain sm_90), unless ``tl.disable_tma_lower``; ``tl.cuda.enable_tma`` switches them
    on or off explicitly (default: `tilelang_cuda.tma.ENABLED_BY_DEFAULT`)."""
    from tilelang.backend.sdk import current_tl_config
    from tilelang_cuda import tma

    arch = str(target.attrs.get("arch", "")) if hasattr(target, "attrs") else str(target.get("arch", ""))
    if arch_number(target) < 90 or not arch.endswith("a") or current_tl_config(tma.DISABLE_KEY, False):
        return False
    return bool(current_tl_config(tma.ENABLE_KEY, tma.ENABLED_BY_DEFAULT))


def _tma_plan(ctx: Any) -> tuple[Any, Any, list[int]] | None:
    """``(src, dst, [rows, cols])`` when the copy is one TMA box: a 2-D global tensor with a static row length of
    a multiple of 16 bytes, box dims <= 256 (columns: a multiple of 16 bytes), into a whole shared tile (or
    one whole version of a multi-buffered tile)."""
    from tilelang_cuda.tma import DATA_TYPES, MAX_BOX

    if not tma_enabled(ctx.target):
        return None
    plan = _plan(ctx)
    if plan is None:
        return None
    src, dst, ext, _ = plan
    dtype, elem = str(src.source.ty.dtype), dtype_bytes(str(src.source.ty.dtype))
    gshape, dshape = list(src.source.ty.shape), list(dst.source.ty.shape)
    if len(gshape) != 2 or len(ext) > 2 or dtype not in DATA_TYPES or len(dshape) < 2:
        return None
    box = [C.as_int(src.region[0].extent), C.as_int(src.region[1].extent)]
    row = C.as_int(gshape[1])
    if None in box or row is None or (row * elem) % 16 or (box[1] * elem) % 16:
        return None
    if not all(1 <= b <= MAX_BOX for b in box):
        return None
    if [C.as_int(d) for d in dshape[-2:]] != box or any(not C.is_const(r.extent, 1) for r in dst.region[:-2]):
        return None
    if not all(C.is_const(r.min, 0) for r in dst.region[-2:]):
        return None
    return src, dst, box


def lower_tma_copy(ctx: Any) -> Any:
    """Thread 0 issues one ``cp.async.bulk.tensor`` (out-of-bounds elements read as zero); every thread waits on
    the mbarrier, then a barrier publishes the tile."""
    src, dst, box = _tma_plan(ctx)  # type: ignore[misc]
    elem = dtype_bytes(str(src.source.ty.dtype))
    slot = 0  # the copy is awaited at once, so one barrier serves every copy of the kernel
    from tilelang.layout import linearize

    # the pointer covers the whole box (so no pass treats it as a one-element access, e.g. swizzling)
    offset = linearize([r.min for r in dst.region], list(dst.source.ty.shape))
    dst_ptr = tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(str(dst.source.ty.dtype)),
                               dst.source.data, offset, box[0] * box[1], 2)
    issue = extern("tl_tma_load_2d", str(src.source.name), box[0], box[1], dst_ptr, slot,
                   box[0] * box[1] * elem, src.region[1].min, src.region[0].min)
    first = tirx.IfThenElse(C.linear_thread(ctx.func) == 0, issue, None)
    return C.seq([sync(), first, extern("tl_tma_wait", slot), sync()])


TMA_COPY = TileOpImpl("tl.copy", "cuda_tma", lower_tma_copy, supports_target=is_cuda,
                      applies=lambda ctx: _tma_plan(ctx) is not None, priority=20)
COPY = TileOpImpl("tl.copy", "cuda_cp_async", lower_copy, supports_target=is_cuda, applies=_applies, priority=10)
