"""Bit casts, tensor construction and offsets, warp election, partial barriers, register reallocation.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/utils.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import dsl_installed, module_getattr, provide

BYTES_PER_TENSORMAP = 128  # a CUtensorMap
BYTES_PER_POINTER = 8

_FUNCTIONS = [
    'Float4E2M1FN_unpack', 'bitcast', 'recast_ptr', 'cast_tensor', 'as_tensor_ssa', 'as_rmem_tensor',
    'make_filled_tensor', 'make_tensor_at_offset', 'handle_add_byte_offset', 'shuffle_elect', 'sync_thread_partial',
    'warpgroup_reg_alloc', 'warpgroup_reg_dealloc', 'pack_half2',
]

globals().update(provide(__name__, _FUNCTIONS, impl="utils"))
if dsl_installed():
    from tilelang_cuda.contrib.cutedsl._dsl.utils import type_map  # noqa: F401
else:
    globals().pop('type_map', None)  # left by an earlier import where the DSL was installed (importlib.reload)
    __getattr__ = module_getattr(__name__, ['type_map'])

__all__ = ['BYTES_PER_TENSORMAP', 'BYTES_PER_POINTER', *_FUNCTIONS]  # type_map: attribute access only
