"""Helpers shared by the Metal tile-op implementations: operand staging, flat offsets, simdgroup ids."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import _common as C

SIMD_WIDTH = 32
THREADGROUP_SCOPES = ("shared", "shared.dyn")


def const_ints(values: Any) -> list[int] | None:
    """The values as Python ints, or None when one is not a constant."""
    out = [C.as_int(v) for v in values]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def in_threadgroup(region: Any) -> tuple[list[Any], Any]:
    """`region` readable through a threadgroup pointer: fragments and locals are copied to a scratch tile first.

    The copy is a parallel nest over the whole buffer, so a partitioned fragment is copied by its owners and a
    replicated one by any thread (every copy is equal). Returns ``(statements to run first, region)``.
    """
    buf = region.source
    if C.scope_of(buf) in THREADGROUP_SCOPES:
        return [], region
    scratch = C.buffer_with(buf, scope="shared.dyn", name=f"{buf.name}_tg")
    fill = C.make_parallel_nest(list(buf.ty.shape),
                                lambda vs: tirx.BufferStore(scratch, tirx.BufferLoad(buf, vs), vs))
    return [tirx.AllocBuffer(scratch), fill], tirx.BufferRegion(scratch, list(region.region))


def row_length(buf: Any) -> int:
    return int(C.as_int(buf.ty.shape[-1]))


def simd_ids(ctx: Any) -> tuple[Any, Any]:
    """``(simdgroup index, lane)`` of the current thread (simdgroups are consecutive runs of 32 threads)."""
    tid = C.linear_thread(ctx.func)
    return tirx.floordiv(tid, SIMD_WIDTH), tirx.floormod(tid, SIMD_WIDTH)


def barrier() -> Any:
    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", tvm.ir.StringImm("shared")))
