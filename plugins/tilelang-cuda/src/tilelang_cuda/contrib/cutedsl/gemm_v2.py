"""Hopper wgmma issued directly from matrix descriptors, with warpgroup fences and waits.

CuTe DSL device helpers of the reference TileLang; here stand-ins that raise
`CuTeDSLHelperUnavailable` explaining what is missing (see `tilelang_cuda.contrib.cutedsl`).
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import helpers

_FUNCTIONS = [
    'initialize_wgmma_descriptor', 'increase_descriptor_offset', 'warpgroup_fence_operand', 'warpgroup_arrive',
    'warpgroup_commit_batch', 'warpgroup_wait', 'wgmma_ss', 'wgmma_rs',
]
_CLASSES = [
    'GmmaDescriptor',
]

globals().update(helpers(__name__, _FUNCTIONS, _CLASSES))

__all__ = [*_FUNCTIONS, *_CLASSES]
