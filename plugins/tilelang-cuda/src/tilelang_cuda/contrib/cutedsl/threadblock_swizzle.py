"""Block-index swizzles (rasterizations) that walk the grid in panels for better L2 reuse.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/threadblock_swizzle.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
`dim3` is a plain value.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang_cuda.contrib.cutedsl._unavailable import provide


@dataclass(frozen=True)
class dim3:
    """A three-dimensional CUDA index (thread, block or grid)."""

    x: int
    y: int
    z: int


_FUNCTIONS = [
    'ThreadIdx', 'BlockIdx', 'GridDim', 'rasterization2DRow', 'rasterization2DColumn',
    'rasterization2DRowWithCluster', 'rasterization2DColumnWithCluster',
]

globals().update(provide(__name__, _FUNCTIONS, impl="threadblock_swizzle"))

__all__ = ['dim3', *_FUNCTIONS]
