"""Block and warp reductions, cumulative sums / maxima, and named barriers.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/reduce.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'min', 'max', 'bar_sync', 'bar_sync_ptx',
]
_CLASSES = [
    'SumOp', 'MaxOp', 'MinOp', 'BitAndOp', 'BitOrOp', 'BitXorOp', 'CumSum1D', 'CumSum2D', 'CumMax1D', 'CumMax2D',
    'NamedBarrier', 'AllReduce',
]

globals().update(provide(__name__, _FUNCTIONS, _CLASSES, impl="reduce"))

__all__ = [*_FUNCTIONS, *_CLASSES]
