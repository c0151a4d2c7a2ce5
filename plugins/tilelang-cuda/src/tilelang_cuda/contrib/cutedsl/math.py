"""Fast math on scalars and tensors (exp, exp2, log, trigonometry, rsqrt, min/max, half conversions).

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/math.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'abs2', 'exp', 'exp2', 'exp10', 'log', 'log1p', 'log2', 'log10', 'tan', 'cos', 'sin', 'sqrt', 'rsqrt', 'fabsf',
    'max2', 'min2', 'copysignf', 'divf', 'isfinite', '__habs', '__float2half_rz', 'tanh',
]

globals().update(provide(__name__, _FUNCTIONS, impl="math"))

__all__ = [*_FUNCTIONS]
