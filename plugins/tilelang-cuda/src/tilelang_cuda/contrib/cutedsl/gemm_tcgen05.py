"""Blackwell tcgen05 MMA, tensor-memory allocation, loads and stores, and their descriptors.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/gemm_tcgen05.py``, inline ``tcgen05`` PTX), otherwise stand-ins that raise `CuTeDSLHelperUnavailable`
naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'initialize_tcgen05_descriptor', 'tcgen05mma_ss', 'tcgen05mma_ws_ss', 'tcgen05mma_ts', 'tcgen05_mma_arrive',
    'tcgen05_before_thread_sync', 'tcgen05_after_thread_sync', 'tmem_allocate', 'tmem_deallocate',
    'tcgen05_ld_32dp32bNx', 'tcgen05_ld_32dp64bNx', 'tcgen05_ld_32dp128bNx', 'tcgen05_ld_32dp256bNx',
    'tcgen05_ld_16dp64bNx', 'tcgen05_ld_16dp128bNx', 'tcgen05_ld_16dp256bNx', 'tcgen05_st_32dp32bNx',
    'tcgen05_st_32dp64bNx', 'tcgen05_st_32dp128bNx', 'tcgen05_st_32dp256bNx', 'tcgen05_st_16dp64bNx',
    'tcgen05_st_16dp128bNx', 'tcgen05_st_16dp256bNx', 'tcgen05mma_blockscaled_ss', 'tcgen05_cp_warpx4',
    'tcgen05_sf_warp_transpose',
]
_CLASSES = [
    'Tcgen05SmemDescriptor',
]

globals().update(provide(__name__, _FUNCTIONS, _CLASSES, impl="gemm_tcgen05"))

__all__ = [*_FUNCTIONS, *_CLASSES]
