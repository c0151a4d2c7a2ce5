"""IEEE-rounded float arithmetic (add, sub, mul, fma, rcp, sqrt, div) with an explicit rounding mode.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/ieee_math.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'ieee_fadd', 'ieee_fsub', 'ieee_fmul', 'ieee_fmaf', 'ieee_frcp', 'ieee_fsqrt', 'ieee_fdiv',
]

globals().update(provide(__name__, _FUNCTIONS, impl="ieee_math"))

__all__ = [*_FUNCTIONS]
