"""Kernel launch: ``with T.Kernel(gx, gy, threads=128) as (bx, by):`` and the thread/block index queries."""

from __future__ import annotations

import contextlib
from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang.frontend import state as _state

_BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
_THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
_BLOCK_NAMES = ("bx", "by", "bz")
_THREAD_NAMES = ("tx", "ty", "tz")
DEFAULT_THREADS = 128


def _extent(value: Any, what: str) -> Any:
    import tvm

    if isinstance(value, bool) or not (isinstance(value, int) or (
            isinstance(value, tvm.ir.Expr) and tvm.ir.is_prim_expr(value)
            and str(value.ty.dtype).startswith(("int", "uint")))):
        raise KernelTypeError(f"{what} must be an integer or an integer expression, got {value!r}")
    if isinstance(value, int) and value < 1:
        raise KernelTypeError(f"{what} must be at least 1, got {value}")
    return value


def _normalize_threads(threads: int | list[int] | tuple | None) -> list[Any]:
    """A thread-block specification as ``[x, y, z]`` (default 128 threads; missing dimensions are 1).

    ValueError for a type other than an int, list or tuple, and for a constant extent that is not positive
    (which would launch empty blocks).
    """
    if threads is None:
        threads = DEFAULT_THREADS
    if isinstance(threads, int) and not isinstance(threads, bool):
        normalized = [threads, 1, 1]
    elif isinstance(threads, (list, tuple)):
        normalized = list(threads) + [1] * (3 - len(threads))
    else:
        raise ValueError("threads must be an integer or a list of integers")
    if any(isinstance(e, int) and e <= 0 for e in normalized):
        raise ValueError(f"threads must be positive, got {threads}")
    return normalized


class Kernel:
    """A kernel launch over a grid of 1-3 dims (none: a grid of one block); entering it yields the block indices
    (one Var or a tuple).

    ``threads`` is an int or a tuple of up to 3 ints (default 128); ``is_cpu=True`` means one thread per block.
    """

    def __init__(self, *grid: Any, threads: Any = None, is_cpu: bool = False, prelude: Any = None,
                 **_ignored: Any):
        if not grid:
            grid = (1,)  # T.Kernel(threads=N) alone: one block, as in the reference
        if len(grid) > 3:
            raise KernelTypeError(f"T.Kernel takes 1 to 3 grid extents, got {len(grid)}")
        self.grid = [_extent(g, f"grid extent {i}") for i, g in enumerate(grid)]
        if threads is None:
            threads = 1 if is_cpu else DEFAULT_THREADS
        _normalize_threads(threads)
        threads = list(threads) if isinstance(threads, (list, tuple)) else [threads]
        if not 1 <= len(threads) <= 3:
            raise KernelTypeError(f"T.Kernel threads takes 1 to 3 extents, got {len(threads)}")
        self.threads = [_extent(t, "threads") for t in threads]
        self.is_cpu = is_cpu
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> Any:
        from tvm.script.ir_builder import tirx as B

        st = _state.require("T.Kernel")
        if st.launches:
            raise KernelSyntaxError("T.Kernel cannot be nested inside another T.Kernel")
        stack = contextlib.ExitStack()
        bvars = [stack.enter_context(B.launch_thread(tag, e)) for tag, e in zip(_BLOCK_TAGS, self.grid)]
        tvars = [stack.enter_context(B.launch_thread(tag, e)) for tag, e in zip(_THREAD_TAGS, self.threads)]
        from tvm.script.ir_builder import IRBuilder

        for name, v in zip(_BLOCK_NAMES + _THREAD_NAMES, bvars + [None] * (3 - len(bvars)) + tvars):
            if v is not None:
                IRBuilder.name(name, v)
                st.fresh(v)
        self._stack = stack
        st.launches.append(_state.LaunchInfo(bvars, tvars, self.is_cpu))
        return bvars[0] if len(bvars) == 1 else tuple(bvars)

    def __exit__(self, *exc: Any) -> None:
        st = _state.current()
        if st is not None and st.launches:
            st.launches.pop()
        if self._stack is not None:
            self._stack.__exit__(*exc)
            self._stack = None


def get_thread_binding(dim: int = 0) -> Any:
    """The ``threadIdx`` var of dimension `dim` (0=x, 1=y, 2=z) of the enclosing ``T.Kernel``."""
    launch = _state.in_kernel("T.get_thread_binding")
    if not 0 <= dim < len(launch.thread_vars):
        raise KernelTypeError(f"T.get_thread_binding({dim}): the kernel has {len(launch.thread_vars)} thread dims")
    return launch.thread_vars[dim]


def get_block_binding(dim: int = 0) -> Any:
    """The ``blockIdx`` var of dimension `dim` of the enclosing ``T.Kernel``."""
    launch = _state.in_kernel("T.get_block_binding")
    if not 0 <= dim < len(launch.block_vars):
        raise KernelTypeError(f"T.get_block_binding({dim}): the kernel has {len(launch.block_vars)} grid dims")
    return launch.block_vars[dim]


def get_thread_bindings() -> list[Any]:
    return list(_state.in_kernel("T.get_thread_bindings").thread_vars)


def get_block_bindings() -> list[Any]:
    return list(_state.in_kernel("T.get_block_bindings").block_vars)


def sync_threads(barrier_id: Any = None, arrive_count: Any = None) -> None:
    """A barrier over the threads of a block (``tvm_storage_sync("shared")``); with `barrier_id` and
    `arrive_count`, named barrier `barrier_id` over the `arrive_count` threads that reach it (``bar.sync id, n``:
    a subset of the block, e.g. the threads of an ``if tx < n`` branch)."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.ir.ops import intrin_call

    _state.in_kernel("T.sync_threads")
    if barrier_id is None and arrive_count is None:
        B.evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        return
    if barrier_id is None or arrive_count is None:
        raise KernelTypeError("T.sync_threads(barrier_id, arrive_count): a named barrier needs both its id and "
                              "the number of threads that arrive at it")
    args = [tirx.const(a, "int32") if isinstance(a, int) else a for a in (barrier_id, arrive_count)]
    B.evaluate(intrin_call("tl.named_barrier_sync", "handle", args))
