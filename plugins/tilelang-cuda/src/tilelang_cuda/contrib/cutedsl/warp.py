"""Warp shuffles, votes, population count and warp-wide reductions.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/warp.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32

_FUNCTIONS = [
    '__activemask', '__shfl_down_sync', '__shfl_up_sync', '__shfl_sync', '__shfl_xor_sync', '__match_any_sync',
    '__popc', 'warp_reduce_sum', 'warp_reduce_max', 'warp_reduce_min', 'warp_reduce_bitand', 'warp_reduce_bitor',
]

globals().update(provide(__name__, _FUNCTIONS, impl="warp"))

__all__ = ['FULL_MASK', 'WARP_SIZE', *_FUNCTIONS]
