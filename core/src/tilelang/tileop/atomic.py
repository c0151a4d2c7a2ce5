"""Generic ``tl.atomic``: element-wise atomic add / max / min into a region.

On targets with threads: an extern call on the element's address, named by
``pipeline_options["atomic_functions"]`` (default: the CUDA/HIP spellings ``atomicAdd`` / ``atomicMax`` /
``atomicMin``). On targets without threads the update is a plain read-modify-write wrapped in an
``AttrStmt("tl.atomic")``; the backend that emulates the block grid must then run blocks so that such updates
do not race (the CPU backend runs those kernels' blocks serially).
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast, guarded, nonunit_dims, region_indices
from tilelang.transform import utils as C

ATOMIC_ATTR = "tl.atomic"
DEFAULT_ATOMIC_FUNCTIONS = {"add": "atomicAdd", "max": "atomicMax", "min": "atomicMin"}


def lower_atomic(ctx: Any) -> Any:
    if len(ctx.args) < 2:
        raise ctx.error("expects (dst, value, kind)")
    kind = ctx.str_arg(2, "add")
    if kind not in ("add", "max", "min"):
        raise ctx.error(f"unknown atomic kind {kind!r}; expected add, max or min")
    if ctx.int_arg(3, 0):  # the reference refuses it off CUDA too (its test_cpu_atomic_add_use_tma_rejected)
        from tilelang.backend.target import kind_of

        raise ctx.error(f"use_tma=True needs a TMA reduction (CUDA sm_90 and newer); target {kind_of(ctx.target)!r} "
                        "has none: drop use_tma")
    value_arg = ctx.args[1]
    is_tile = isinstance(value_arg, tvm.ir.TensorRegion) or (
        isinstance(value_arg, tvm.ir.Var) and tirx.is_buffer_var(value_arg))
    if is_tile:
        dst, val = ctx.regions(0, 1)
        pre, val = ctx.staged(val)
    else:
        dst, val, pre = ctx.region(0), None, []
    dims = nonunit_dims(dst)
    ext = [dst.region[d].extent for d in dims]
    dbuf = dst.source
    dtype = str(dbuf.ty.dtype)

    def body(vs: list[Any]) -> Any:
        ctx.bind_loop_vars(vs, ext)
        di = region_indices(dst, dims, vs)
        v = value_arg if val is None else tirx.BufferLoad(val.source, region_indices(val, nonunit_dims(val), vs))
        v = cast(dtype, v)
        if ctx.has_threads:
            addr = tirx.address_of(tirx.BufferLoad(dbuf, di))
            names = {**DEFAULT_ATOMIC_FUNCTIONS, **dict(ctx.options.get("atomic_functions", {}))}
            stmt = tirx.Evaluate(tirx.call_extern(dtype, names[kind], addr, v))
        else:
            cur = tirx.BufferLoad(dbuf, di)
            new = cur + v if kind == "add" else (tirx.Max(cur, v) if kind == "max" else tirx.Min(cur, v))
            stmt = tirx.AttrStmt(tvm.ir.StringImm(kind), ATOMIC_ATTR, 0, tirx.BufferStore(dbuf, new, di))
        return guarded(ctx.in_bounds(dbuf, di), stmt)

    return C.seq([*pre, C.make_parallel_nest(ext, body)])


ATOMIC = TileOpImpl("tl.atomic", "generic", lower_atomic)
