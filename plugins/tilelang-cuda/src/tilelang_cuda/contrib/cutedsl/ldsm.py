"""ldmatrix / stmatrix (x1, x2, x4, transposed) between shared memory and registers.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/ldsm.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'ldmatrix_x1', 'ldmatrix_x2', 'ldmatrix_x4', 'ldmatrix_x1_trans', 'ldmatrix_x2_trans', 'ldmatrix_x4_trans',
    'stmatrix_x1', 'stmatrix_x2', 'stmatrix_x4', 'stmatrix_x1_trans', 'stmatrix_x2_trans', 'stmatrix_x4_trans',
    'ptx_ldmatrix_x1', 'ptx_ldmatrix_x2', 'ptx_ldmatrix_x4', 'ptx_ldmatrix_x1_trans', 'ptx_ldmatrix_x2_trans',
    'ptx_ldmatrix_x4_trans', 'ptx_stmatrix_x1', 'ptx_stmatrix_x2', 'ptx_stmatrix_x4', 'ptx_stmatrix_x1_trans',
    'ptx_stmatrix_x2_trans', 'ptx_stmatrix_x4_trans',
]

globals().update(provide(__name__, _FUNCTIONS, impl="ldsm"))

__all__ = [*_FUNCTIONS]
