"""A grid-wide barrier over a global counter.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/grid_sync.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'sync_grid',
]

globals().update(provide(__name__, _FUNCTIONS, impl="grid_sync"))

__all__ = [*_FUNCTIONS]
