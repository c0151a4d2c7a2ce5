"""IR analyses of tile programs: the reference's pre-lowering checks and IR inspectors.

Checks (each a pass returning the module unchanged; ValueError on a violation), run by `tilelang.lower` before
the pipeline unless ``pass_configs={"tl.disable_prelower_semantic_check": True}``:

- `NestedLoopChecker`: no T.Parallel / T.Pipelined / tile operator inside a T.Parallel (except T.Parallel(m, n));
- `ParallelLocalIndexChecker`: no ``T.alloc_local`` buffer indexed by a T.Parallel variable;
- `FragmentLoopChecker`: no fragment indexed by a T.Parallel variable with a symbolic range.

Inspectors: `ASTPrinter` (``tl.ast_print_enable``) prints the statement tree; `LayoutVisual`
(``tl.layout_visualization_enable``) prints and plots the fragment layouts LayoutInference chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tilelang.analysis.ast_printer import ASTPrinter
from tilelang.analysis.fragment_loop_checker import FragmentLoopChecker
from tilelang.analysis.layout_visual import LayoutVisual
from tilelang.analysis.nested_loop_checker import NestedLoopChecker
from tilelang.analysis.parallel_local_index_checker import ParallelLocalIndexChecker

__all__ = ["ASTPrinter", "FragmentLoopChecker", "LayoutVisual", "NestedLoopChecker", "ParallelLocalIndexChecker",
           "semantic_check"]


def semantic_check(mod: Any, configs: Mapping[str, Any] | None = None) -> None:
    """The reference's pre-lowering checks on `mod` (a PrimFunc or IRModule), honouring `configs`."""
    import tvm

    configs = configs or {}
    if configs.get("tl.disable_prelower_semantic_check", False):
        return
    if isinstance(mod, tvm.tirx.PrimFunc):
        mod = tvm.IRModule({"main": mod})
    if configs.get("tl.ast_print_enable", False):
        ASTPrinter()(mod)
    NestedLoopChecker()(mod)
    ParallelLocalIndexChecker()(mod)
    FragmentLoopChecker()(mod)
