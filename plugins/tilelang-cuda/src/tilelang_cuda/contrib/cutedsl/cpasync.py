"""Asynchronous copies: cp.async, TMA loads / stores / reductions, mbarriers and proxy fences.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/cpasync.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'cp_async_commit', 'cp_async_wait', 'cp_async_gs', 'cp_async_gs_conditional', 'cp_async_shared_global',
    'extract_tensormap_ptr', 'tma_load', 'tma_store', 'tma_reduce', 'tma_store_arrive', 'tma_store_wait',
    'prefetch_tma_descriptor', 'mbarrier_init', 'mbarrier_expect_tx', 'mbarrier_arrive', 'arrive_and_expect_tx',
    'mbarrier_cp_async_arrive_noinc', 'mbarrier_wait', 'mbarrier_cp_async_arrive', 'fence_proxy_async',
    'fence_barrier_init',
]

globals().update(provide(__name__, _FUNCTIONS, impl="cpasync"))

__all__ = [*_FUNCTIONS]
