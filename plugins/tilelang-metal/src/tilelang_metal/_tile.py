"""Helpers shared by the Metal tile-op implementations: operand staging, flat offsets, simdgroup ids."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import utils as C

SIMD_WIDTH = 32
THREADGROUP_SCOPES = ("shared", "shared.dyn")
THREADGROUP_BYTES = 32 * 1024  # Apple GPUs' threadgroup memory
MIN_STAGE_BYTES = 4 * 1024  # the smallest staging budget a tile op plans with


def threadgroup_budget(ctx: Any, cap: int) -> int:
    """Bytes a tile op may stage through threadgroup memory: what the kernel's own shared tiles leave of 32 KiB,
    at most `cap` and at least `MIN_STAGE_BYTES` (TVM may still let buffers share memory; the codegen's
    check has the last word). bf16 tiles are native ``bfloat`` (2 bytes; the ``native_bf16`` pipeline option)."""
    from tilelang.backend.sdk import dtype_bytes

    used = 0
    for alloc in C.allocations(ctx.func.body):
        buf = alloc.buffer
        n = C.num_elements(buf.ty.shape) if C.scope_of(buf) in THREADGROUP_SCOPES else None
        dtype = str(buf.ty.dtype)
        used += (n or 0) * dtype_bytes(dtype)
    return max(MIN_STAGE_BYTES, min(cap, THREADGROUP_BYTES - used))


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
