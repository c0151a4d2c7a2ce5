"""`tilelang._ffi_api`: the reference's flat table of native entry points, served by this project's Python.

The reference exposes its C++ functions here (``_ffi_api.Layout_repeat(...)``); programs and tests that call
them keep working. Each name resolves lazily (PEP 562) to the Python function that implements it, so importing
this module costs nothing. A module that implements more names adds them to `_TABLE`.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> (module, attribute)
_TABLE: dict[str, tuple[str, str]] = {
    "Layout_repeat": ("tilelang.layout.ffi", "layout_repeat"),
    "Layout_expand": ("tilelang.layout.ffi", "layout_expand"),
    "Layout_inverse": ("tilelang.layout.ffi", "layout_inverse"),
    "Layout_reshape": ("tilelang.layout.ffi", "layout_reshape"),
    "Layout_is_equal": ("tilelang.layout.ffi", "layout_is_equal"),
    "Layout_index": ("tilelang.layout.ffi", "layout_index"),
    "Layout_input_shape": ("tilelang.layout.ffi", "layout_input_shape"),
    "Layout_output_shape": ("tilelang.layout.ffi", "layout_output_shape"),
    "Layout_forward_vars": ("tilelang.layout.ffi", "layout_forward_vars"),
    "Layout_linearized_index": ("tilelang.layout.ffi", "layout_linearized_index"),
    "Fragment_thread": ("tilelang.layout.ffi", "fragment_thread"),
    "Fragment_thread_size": ("tilelang.layout.ffi", "fragment_thread_size"),
    "Fragment_repeat": ("tilelang.layout.ffi", "fragment_repeat"),
    "Fragment_replicate": ("tilelang.layout.ffi", "fragment_replicate"),
    "Fragment_condense_rep_var": ("tilelang.layout.ffi", "fragment_condense_rep_var"),
    "Fragment_is_equal": ("tilelang.layout.ffi", "layout_is_equal"),
    "make_linear_layout": ("tilelang.layout.ffi", "make_linear_layout"),
    "make_fully_replicated_layout_fragment": ("tilelang.layout.ffi", "make_fully_replicated_layout_fragment"),
    "make_gemm_fragment_8x8": ("tilelang.layout.swizzle", "make_gemm_fragment_8x8"),
    "make_gemm_fragment_8x8_transposed": ("tilelang.layout.swizzle", "make_gemm_fragment_8x8_transposed"),
    "make_full_bank_swizzled_layout": ("tilelang.layout.swizzle", "make_full_bank_swizzled_layout"),
    "make_half_bank_swizzled_layout": ("tilelang.layout.swizzle", "make_half_bank_swizzled_layout"),
    "make_quarter_bank_swizzled_layout": ("tilelang.layout.swizzle", "make_quarter_bank_swizzled_layout"),
    "ExpandTcgen05Layout": ("tilelang.layout.tcgen05", "expand_tcgen05_layout"),
    "get_tcgen05_meta_ld_32dp32b": ("tilelang.layout.tcgen05", "meta_ld_32dp32b"),
    "get_tcgen05_meta_ld_16dp64b": ("tilelang.layout.tcgen05", "meta_ld_16dp64b"),
    "get_tcgen05_meta_ld_16dp128b": ("tilelang.layout.tcgen05", "meta_ld_16dp128b"),
    "get_tcgen05_meta_ld_16dp256b": ("tilelang.layout.tcgen05", "meta_ld_16dp256b"),
    "get_tcgen05_meta_st_32dp32b": ("tilelang.layout.tcgen05", "meta_st_32dp32b"),
    "get_tcgen05_meta_st_16dp64b": ("tilelang.layout.tcgen05", "meta_st_16dp64b"),
    "get_tcgen05_meta_st_16dp128b": ("tilelang.layout.tcgen05", "meta_st_16dp128b"),
    "get_tcgen05_meta_st_16dp256b": ("tilelang.layout.tcgen05", "meta_st_16dp256b"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _TABLE[name]
    except KeyError:
        raise AttributeError(f"tilelang._ffi_api has no entry point {name!r}: this project does not implement the "
                             "reference's native function of that name") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_TABLE))
