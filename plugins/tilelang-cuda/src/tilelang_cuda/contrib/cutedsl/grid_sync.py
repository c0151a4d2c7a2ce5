"""A grid-wide barrier over a global counter.

CuTe DSL device helpers of the reference TileLang; here stand-ins that raise
`CuTeDSLHelperUnavailable` explaining what is missing (see `tilelang_cuda.contrib.cutedsl`).
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'sync_grid',
]

globals().update(provide(__name__, _FUNCTIONS, impl="grid_sync"))

__all__ = [*_FUNCTIONS]
