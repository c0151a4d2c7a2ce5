"""Tile GEMMs built on CuTe's MMA atoms (SM80 mma.sync, SM90 wgmma) for shared/register operands.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/gemm_v1.py`` on CuTe's tiled MMAs), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what
to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'make_aligned_tensor', 'gemm_ss', 'gemm_rs', 'gemm_sr', 'gemm_rr',
]
_CLASSES = [
    'Gemm_SM80', 'Gemm_SM90',
]

globals().update(provide(__name__, _FUNCTIONS, _CLASSES, impl="gemm_v1"))

__all__ = [*_FUNCTIONS, *_CLASSES]
