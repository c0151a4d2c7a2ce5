"""Tile GEMMs built on CuTe's MMA atoms (SM80 mma.sync, SM90 wgmma) for shared/register operands.

CuTe DSL device helpers of the reference TileLang; here stand-ins that raise
`CuTeDSLHelperUnavailable` explaining what is missing (see `tilelang_cuda.contrib.cutedsl`).
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import helpers

_FUNCTIONS = [
    'make_aligned_tensor', 'gemm_ss', 'gemm_rs', 'gemm_sr', 'gemm_rr',
]
_CLASSES = [
    'Gemm_SM80', 'Gemm_SM90',
]

globals().update(helpers(__name__, _FUNCTIONS, _CLASSES))

__all__ = [*_FUNCTIONS, *_CLASSES]
