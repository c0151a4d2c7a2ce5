"""TileLang's developer tools.

- `plot_layout`: draw a `T.Layout` / `T.Fragment` as PNG / SVG / PDF (matplotlib: ``pip install tilelang-core[tools]``)
- `Analyzer`: roofline estimate (FLOPs, global-memory bytes, time) of a kernel on an architecture
- `lower_trace`: the IR before/after every pass of a compilation (terminal diff, HTML report)
- `pass_timing`: the time of every pass of a compilation
- `pass_visualizer`: a kernel's structure tree after each pass, as an interactive HTML page
- `compile_only`: compile a kernel file for a target with no device present
- `cuda.iket`: IKET event markers in generated CUDA (comes with tilelang-cuda; the external IKET profiler
  collects the traces)

Everything but `plot_layout` and `Analyzer` (both light) is imported on first use. The command-line tools are
also ``tilelang`` subcommands (``tilelang --help``).
"""

from __future__ import annotations

import importlib
from typing import Any

from tilelang.tools.Analyzer import ARCH_CONFIGS, AnalysisResult, Analyzer
from tilelang.tools.plot_layout import plot_layout

_SUBMODULES = frozenset({"compile_only", "cuda", "lower_trace", "pass_timing", "pass_visualizer"})

__all__ = ["ARCH_CONFIGS", "AnalysisResult", "Analyzer", "plot_layout"]


def __getattr__(name: str) -> Any:
    if name not in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
