"""Lowerings of the dialect's warp-level constructs: electing a lane, warpgroup indices, the wgmma warpgroup
fences / commits / waits, and the bit scans of lane masks (``__ffs``, ``__fns``)."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang_cuda.tileops.dialect.emit import LOWER, as_u32, bits_of, ext, lowering, simple
from tilelang_cuda.tileops.dialect.pointers import ptr_add
from tilelang_cuda.tileops.dialect.requirements import BASE, WGMMA


@lowering("tl_shuffle_elect", BASE)
def _shuffle_elect(ctx: Any) -> Any:
    return ext("tl_shuffle_elect_n", ctx.int_arg(0), ctx.linear_thread(), dtype="bool")


@lowering("get_warp_group_idx", BASE)
def _warp_group_idx(ctx: Any) -> Any:
    warp = ctx.args[0] if ctx.args else tirx.IntImm("int32", ctx.warp_size)
    per = ctx.args[1] if len(ctx.args) > 1 else tirx.IntImm("int32", 4)
    return tirx.floordiv(ctx.linear_thread(), warp * per)


simple("warpgroup_arrive", WGMMA, "tl_warpgroup_arrive")
simple("warpgroup_commit_batch", WGMMA, "tl_warpgroup_commit_batch")


@lowering("warpgroup_wait", WGMMA)
def _warpgroup_wait(ctx: Any) -> Any:
    return ext("tl_warpgroup_wait_n", ctx.int_arg(0))


LOWER["tl.wait_wgmma"] = (WGMMA, _warpgroup_wait)


@lowering("warpgroup_fence_operand", WGMMA)
def _fence_operand(ctx: Any) -> Any:
    ptr, offset, num = ctx.args
    return ext("tl_warpgroup_fence_operand", ptr_add(ptr, offset), num)


@lowering("__ffs", BASE)
def _ffs(ctx: Any) -> Any:
    (v,) = ctx.args
    bits = bits_of(str(v.ty.dtype))
    return ext("__ffsll" if bits == 64 else "__ffs", v if bits in (32, 64) else tirx.Cast("int32", v), dtype="int32")


@lowering("__fns", BASE)
def _fns(ctx: Any) -> Any:
    mask, base, offset = ctx.args
    return ext("__fns", as_u32(mask), as_u32(base), tirx.Cast("int32", offset), dtype="uint32")
