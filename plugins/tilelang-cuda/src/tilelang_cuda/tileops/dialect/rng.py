"""Lowerings of the dialect's random numbers (``T.rng_init`` / ``rng_rand`` / ``rng_rand_float``): a Philox
state in registers, drawn from by the device helpers."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang_cuda.tileops.dialect.emit import ext, lowering
from tilelang_cuda.tileops.dialect.pointers import addr_of
from tilelang_cuda.tileops.dialect.requirements import BASE


@lowering("rng_init", BASE)
def _rng_init(ctx: Any) -> Any:
    load, seed, seq_, off = ctx.args
    if isinstance(seq_, tvm.ir.StringImm):  # the thread's global x index
        tx = ctx.thread_vars[0] if ctx.thread_vars else tirx.IntImm("int32", 0)
        bx = ctx.block_vars[0] if ctx.block_vars else tirx.IntImm("int32", 0)
        ex = ctx.thread_extents[0] if ctx.thread_extents else 1
        seq_ = tirx.Cast("uint64", tx + bx * ex)
    return ext("tl_rng_init", addr_of(load), seed, seq_, off)


@lowering("rng_rand", BASE)
def _rng_rand(ctx: Any) -> Any:
    return ext("tl_rng_rand", addr_of(ctx.args[0]), dtype="uint32")


@lowering("rng_rand_float", BASE)
def _rng_rand_float(ctx: Any) -> Any:
    load, dist = ctx.args
    kind = "normal" if str(dist.value) == "normal" else "uniform"
    width = "f64" if ctx.dtype == "float64" else "f32"
    return ext(f"tl_rng_{kind}_{width}", addr_of(load), dtype=ctx.dtype)
