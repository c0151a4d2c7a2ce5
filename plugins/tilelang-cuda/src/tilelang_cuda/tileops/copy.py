"""``tl.copy`` global -> shared with ``cp.async`` (sm_80+): 16-byte asynchronous copies, zero-filled tails.

Applies when both sides have the same dtype, static extents, a contiguous innermost dimension whose extent,
start and row length are multiples of 16 bytes (so each vector is wholly inside or outside the source).
Threads take vectors cyclically; out-of-bounds vectors copy 0 bytes (cp.async fills the 16 bytes with
zeros). The copy waits for its group before the closing barrier, so consumers see a plain shared tile.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.layout import unravel
from tilelang.transform import _common as C
from tilelang.transform.plan_shared_memory import dtype_bytes
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
    vec = VECTOR_BYTES // dtype_bytes(dtype)
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
    threads = ctx.num_threads
    tid = C.linear_thread(ctx.func)
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


COPY = TileOpImpl("tl.copy", "cuda_cp_async", lower_copy, supports_target=is_cuda, applies=_applies, priority=10)
