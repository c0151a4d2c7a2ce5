"""FragmentLoopChecker: a ``T.Parallel`` loop with a symbolic range must not index a fragment.

A fragment (``T.alloc_fragment``) is spread over the block's threads by layout inference, which needs the
constant iteration space of the parallel loops that touch it. ``for i in T.Parallel(n): frag[i] = ...`` with a
runtime ``n`` cannot be laid out; loops whose variable does not index the fragment are fine.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.analysis import _ir

__all__ = ["FragmentLoopChecker", "check_fragment_loops", "collect_fragment_accesses"]


def collect_fragment_accesses(statement: Any) -> list[Any]:
    """Every fragment load (``tvm.ir.TensorLoad``) and store (``tirx.BufferStore``) in `statement`."""
    import tvm
    import tvm_ffi

    found: list[Any] = []

    def keep(node: Any) -> None:
        buf = node.buffer if isinstance(node, tirx.BufferStore) else node.source
        if _ir.scope_of(buf) == "local.fragment":
            found.append(node)

    tvm_ffi.structural_walk(statement, [(tirx.BufferStore, keep), (tvm.ir.TensorLoad, keep)], order="pre")
    return found


def _symbolic(loop: Any) -> bool:
    return not (isinstance(loop.min, tirx.IntImm) and isinstance(loop.extent, tirx.IntImm))


def check_fragment_loops(func: Any) -> None:
    """Raise ValueError for the first symbolic-range parallel loop whose variable indexes a fragment."""
    import tvm_ffi

    loops: list[Any] = []
    tvm_ffi.structural_walk(func.body, [(tirx.For, loops.append)], order="pre")
    for loop in loops:
        if not (_ir.is_parallel(loop) and _symbolic(loop)):
            continue
        for access in collect_fragment_accesses(loop.body):
            if any(_ir.uses(i, loop.loop_var) for i in access.indices):
                raise ValueError(
                    "[Tilelang Semantic Check] "
                    f"Loop variable {loop.loop_var} in a T.Parallel loop with symbolic range (min={loop.min}, "
                    f"extent={loop.extent}) is used to index a fragment buffer, which is not allowed in Tilelang.")


def FragmentLoopChecker() -> Any:
    """A pass that checks every PrimFunc with `check_fragment_loops` (the module is returned unchanged)."""
    return _ir.checker_pass("tl.FragmentLoopChecker", check_fragment_loops)
