"""ParallelLocalIndexChecker: a thread-private ``T.alloc_local`` buffer must not be indexed by a ``T.Parallel``
loop variable.

A local buffer belongs to one thread and takes no part in parallel layout inference, so ``local[i]`` inside
``for i in T.Parallel(n)`` has no meaning. Accesses independent of the parallel variables (``scale[0]``, or an
inner ``T.vectorized`` index) are fine. A block of one thread (``T.Kernel(..., is_cpu=True)``) is exempt: its
local buffers are the block's tiles, and a parallel loop over them is the CPU form of a tile loop.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.analysis import _ir

__all__ = ["ParallelLocalIndexChecker", "check_parallel_local_indices"]


def check_parallel_local_indices(func: Any) -> None:
    """Raise ValueError for the first local-buffer access indexed by an enclosing parallel loop variable."""
    import tvm_ffi

    from tilelang.transform import utils as C

    if C.launch_extents(func) and C.block_threads(func) == 1:
        return
    loops: list[Any] = []
    tvm_ffi.structural_walk(func.body, [(tirx.For, loops.append)], order="pre")
    for loop in loops:
        if not _ir.is_parallel(loop):
            continue
        for buf, indices in _ir.accesses(loop.body):
            if _ir.scope_of(buf) == "local" and any(_ir.uses(i, loop.loop_var) for i in indices):
                raise ValueError(
                    "[Tilelang Semantic Check] "
                    f"Local buffer `{_ir.buffer_name(buf)}` is indexed by T.Parallel loop variable `{loop.loop_var}`. "
                    "Local buffers are thread-private and do not participate in parallel layout inference. "
                    "Use T.serial/T.vectorized/T.unroll for per-thread local indexing, or T.alloc_fragment "
                    "when the indexed dimension should be distributed across threads.")


def ParallelLocalIndexChecker() -> Any:
    """A pass that checks every PrimFunc with `check_parallel_local_indices` (returned unchanged)."""
    return _ir.checker_pass("tl.ParallelLocalIndexChecker", check_parallel_local_indices)
