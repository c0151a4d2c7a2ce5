"""Hopper wgmma issued directly from matrix descriptors, with warpgroup fences and waits.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/gemm_v2.py``, inline ``wgmma`` PTX), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what
to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'initialize_wgmma_descriptor', 'increase_descriptor_offset', 'warpgroup_fence_operand', 'warpgroup_arrive',
    'warpgroup_commit_batch', 'warpgroup_wait', 'wgmma_ss', 'wgmma_rs',
]
_CLASSES = [
    'GmmaDescriptor',
]

globals().update(provide(__name__, _FUNCTIONS, _CLASSES, impl="gemm_v2"))

__all__ = [*_FUNCTIONS, *_CLASSES]
