"""NestedLoopChecker: the loop nestings TileLang gives a meaning to.

- ``T.serial`` may appear anywhere.
- ``T.Parallel`` directly inside ``T.Parallel`` (nothing else in between) is one multi-dimensional parallel
  loop; any other ``T.Parallel`` inside a ``T.Parallel`` is an error.
- Inside a ``T.Parallel`` only element-wise code is allowed: no tile operator (``T.copy``, ``T.gemm``, ...) and
  no ``T.Pipelined`` loop (a parallel loop inside a pipelined one is fine).
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.analysis import _ir

__all__ = ["NestedLoopChecker", "check_nested_loops", "is_pipelined_for", "is_tile_op"]

_PREFIX = "[Tilelang Semantic Check] "


def is_pipelined_for(loop: Any) -> bool:
    """Whether `loop` is a ``T.Pipelined`` loop."""
    return isinstance(loop, tirx.For) and _ir.is_pipelined(loop)


def is_tile_op(call: Any) -> bool:
    """Whether `call` invokes a tile operator (``T.copy``, ``T.gemm``, ...), which may not run inside T.Parallel."""
    from tvm import tirx as _tirx

    return _ir.tile_op_name(_tirx.Evaluate(call)) is not None


def _visit(stmt: Any, in_parallel: bool) -> None:
    if isinstance(stmt, tirx.For):
        if _ir.is_parallel(stmt):
            if _ir.is_parallel(stmt.body):  # T.Parallel(m, n): one loop nest
                _visit(stmt.body, in_parallel)
                return
            if in_parallel:
                raise ValueError(_PREFIX + "Nested parallel loops are not allowed. Please check your loop structure.")
            _visit(stmt.body, True)
            return
        if in_parallel and _ir.is_pipelined(stmt):
            raise ValueError(_PREFIX + "Pipelined loop cannot be nested inside a parallel loop. Please check your "
                                       "loop structure.")
    elif in_parallel:
        name = _ir.tile_op_name(stmt)
        if name is not None:
            raise ValueError(_PREFIX + "Only elementwise operations are allowed inside a parallel loop. Got a "
                                       f'tile-op "{name}".')
    for child in _ir.child_stmts(stmt):
        _visit(child, in_parallel)


def check_nested_loops(func: Any) -> None:
    """Raise ValueError for the first loop nesting the module docstring forbids."""
    _visit(func.body, False)


def NestedLoopChecker() -> Any:
    """A pass that checks every PrimFunc with `check_nested_loops` (returned unchanged)."""
    return _ir.checker_pass("tl.NestedLoopChecker", check_nested_loops)
