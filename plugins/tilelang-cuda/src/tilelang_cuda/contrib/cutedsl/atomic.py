"""Atomic operations (add, max, min, load, store) on global and shared memory.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/atomic.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'AtomicAdd', 'AtomicAddRet', 'AtomicAddx2', 'AtomicAddx4', 'AtomicMax', 'AtomicMaxRet', 'AtomicMin',
    'AtomicMinRet', 'AtomicLoad', 'AtomicStore',
]

globals().update(provide(__name__, _FUNCTIONS, impl="atomic"))

__all__ = [*_FUNCTIONS]
