"""Warp- and block-level collectives: votes, ballots, shuffles, warp reductions, lane / warp indices and barriers.

Each returns an intrinsic call (`tilelang.ir.ops.INTRINSICS`) that the backends lower: CUDA / ROCm warp
intrinsics, Metal SIMD-group functions, WebGPU subgroup builtins, an emulation on the CPU; a backend that cannot
offers a `LoweringError` naming the construct. Masks default to the full 32-lane warp.
"""

from __future__ import annotations

from typing import Any

from tilelang.ir import ops as _ops

FULL_WARP_MASK = 0xFFFFFFFF
DEFAULT_SHFL_WIDTH = 32


def _expr(x: Any) -> Any:
    from tvm import tirx

    if hasattr(x, "asobject"):
        x = x.asobject()
    if isinstance(x, bool):
        return tirx.const(x, "bool")
    if isinstance(x, int):
        return tirx.const(x, "int32")
    if isinstance(x, float):
        return tirx.const(x, "float32")
    return x


def _dtype(x: Any) -> str:
    return str(x.ty.dtype)


def _mask(mask: Any) -> Any:
    """A lane mask as a uint32 expression (a Python literal would otherwise widen to int64)."""
    from tvm import tirx

    if isinstance(mask, int) and not isinstance(mask, bool):
        return tirx.const(mask & 0xFFFFFFFF, "uint32")
    return _expr(mask)


def _predicate(predicate: Any, name: str) -> Any:
    """An integer or boolean predicate; TypeError for anything else (a float would be truncated)."""
    p = _expr(predicate)
    dtype = _dtype(p) if hasattr(p, "ty") else type(p).__name__
    if not dtype.startswith(("int", "uint", "bool")):
        raise TypeError(f"T.{name} requires an integer or boolean predicate, but got {dtype}.")
    return p


def _index_arg(value: Any) -> list[Any]:
    return [] if value is None else [_expr(value)]


def any_sync(predicate: Any, mask: Any = FULL_WARP_MASK) -> Any:
    """Non-zero (int32) when any lane of `mask` has a non-zero `predicate`."""
    return _ops.intrin_call("tl.any_sync", "int32", [_mask(mask), _predicate(predicate, "any_sync")])


def all_sync(predicate: Any, mask: Any = FULL_WARP_MASK) -> Any:
    """Non-zero (int32) when every lane of `mask` has a non-zero `predicate`."""
    return _ops.intrin_call("tl.all_sync", "int32", [_mask(mask), _predicate(predicate, "all_sync")])


def ballot_sync(predicate: Any, mask: Any = FULL_WARP_MASK) -> Any:
    """A uint64 with bit n set when lane n of `mask` has a non-zero `predicate`."""
    return _ops.intrin_call("tl.ballot_sync", "uint64", [_mask(mask), _predicate(predicate, "ballot_sync")])


def ballot(predicate: Any) -> Any:
    """`ballot_sync` over the full warp."""
    return _ops.intrin_call("tl.ballot", "uint64", [_predicate(predicate, "ballot")])


def activemask() -> Any:
    """A uint64 with bit n set for every active lane of the warp."""
    return _ops.intrin_call("tl.activemask", "uint64", [])


def syncthreads_count(predicate: Any) -> Any:
    """Block barrier; the number of threads (int32) whose `predicate` is non-zero."""
    return _ops.intrin_call("tl.syncthreads_count", "int32", [_predicate(predicate, "syncthreads_count")])


def syncthreads_and(predicate: Any) -> Any:
    """Block barrier; non-zero when every thread's `predicate` is non-zero."""
    return _ops.intrin_call("tl.syncthreads_and", "int32", [_predicate(predicate, "syncthreads_and")])


def syncthreads_or(predicate: Any) -> Any:
    """Block barrier; non-zero when any thread's `predicate` is non-zero."""
    return _ops.intrin_call("tl.syncthreads_or", "int32", [_predicate(predicate, "syncthreads_or")])


def match_any_sync(value: Any, mask: Any = FULL_WARP_MASK) -> Any:
    """A uint32 mask of the lanes of `mask` whose `value` equals this lane's."""
    return _ops.intrin_call("tl.match_any_sync", "uint32", [_mask(mask), _expr(value)])


def match_all_sync(value: Any, mask: Any = FULL_WARP_MASK) -> Any:
    """`mask` when every lane of `mask` holds the same `value`, else 0."""
    return _ops.intrin_call("tl.match_all_sync", "uint32", [_mask(mask), _expr(value)])


def _shuffle(name: str, value: Any, lane: Any, width: Any, mask: Any) -> Any:
    v = _expr(value)
    return _ops.intrin_call(name, _dtype(v), [_mask(mask), v, _expr(lane), _expr(width)])


def shfl_sync(value: Any, srcLane: Any, width: Any = DEFAULT_SHFL_WIDTH, mask: Any = FULL_WARP_MASK) -> Any:
    """`value` as held by lane `srcLane` (within groups of `width` lanes)."""
    return _shuffle("tl.shfl_sync", value, srcLane, width, mask)


def shfl_xor(value: Any, delta: Any, width: Any = DEFAULT_SHFL_WIDTH, mask: Any = FULL_WARP_MASK) -> Any:
    """`value` as held by lane ``lane ^ delta``."""
    return _shuffle("tl.shfl_xor_sync", value, delta, width, mask)


def shfl_down(value: Any, delta: Any, width: Any = DEFAULT_SHFL_WIDTH, mask: Any = FULL_WARP_MASK) -> Any:
    """`value` as held by lane ``lane + delta`` (this lane's own value past the end of the group)."""
    return _shuffle("tl.shfl_down_sync", value, delta, width, mask)


def shfl_up(value: Any, delta: Any, width: Any = DEFAULT_SHFL_WIDTH, mask: Any = FULL_WARP_MASK) -> Any:
    """`value` as held by lane ``lane - delta`` (this lane's own value before the start of the group)."""
    return _shuffle("tl.shfl_up_sync", value, delta, width, mask)


def _warp_reduce(kind: str, value: Any) -> Any:
    import tvm

    v = _expr(value)
    if kind.startswith("bit") and not _dtype(v).startswith(("int", "uint")):
        raise TypeError(f"T.warp_reduce_{kind} needs an integer value, got {_dtype(v)}")
    return _ops.intrin_call("tl.warp_reduce", _dtype(v), [v, tvm.ir.StringImm(kind)])


def warp_reduce_sum(value: Any) -> Any:
    """The sum of `value` over the 32 lanes of the warp (every lane gets it)."""
    return _warp_reduce("sum", value)


def warp_reduce_max(value: Any) -> Any:
    """The maximum of `value` over the warp."""
    return _warp_reduce("max", value)


def warp_reduce_min(value: Any) -> Any:
    """The minimum of `value` over the warp."""
    return _warp_reduce("min", value)


def warp_reduce_bitand(value: Any) -> Any:
    """The bitwise and of `value` over the warp."""
    return _warp_reduce("bitand", value)


def warp_reduce_bitor(value: Any) -> Any:
    """The bitwise or of `value` over the warp."""
    return _warp_reduce("bitor", value)


def sync_warp(mask: Any = None) -> Any:
    """A barrier over the lanes of a warp."""
    return _ops.intrin_call("tl.sync_warp", "handle", [] if mask is None else [_mask(mask)])


def sync_grid() -> Any:
    """A barrier over every thread of the grid (a cooperative launch on GPUs)."""
    return _ops.intrin_call("tl.sync_grid", "handle", [])


def sync_global() -> Any:
    """`sync_grid` (the reference's older spelling)."""
    return sync_grid()


def get_lane_idx(warp_size: Any = None) -> Any:
    """The lane of the calling thread within its warp (of `warp_size` lanes; default: the target's)."""
    return _ops.intrin_call("tl.get_lane_idx", "int32", _index_arg(warp_size))


def get_warp_idx_sync(warp_size: Any = None) -> Any:
    """The warp of the calling thread (block-linear thread index // `warp_size`), warp converged."""
    return _ops.intrin_call("tl.get_warp_idx_sync", "int32", _index_arg(warp_size))


def get_warp_idx(warp_size: Any = None) -> Any:
    """The warp of the calling thread (block-linear thread index // `warp_size`)."""
    return _ops.intrin_call("tl.get_warp_idx", "int32", _index_arg(warp_size))


__all__ = ["activemask", "all_sync", "any_sync", "ballot", "ballot_sync", "get_lane_idx", "get_warp_idx",
           "get_warp_idx_sync", "match_all_sync", "match_any_sync", "shfl_down", "shfl_sync", "shfl_up", "shfl_xor",
           "sync_global", "sync_grid", "sync_warp", "syncthreads_and", "syncthreads_count", "syncthreads_or",
           "warp_reduce_bitand", "warp_reduce_bitor", "warp_reduce_max", "warp_reduce_min", "warp_reduce_sum"]
