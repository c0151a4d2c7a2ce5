"""Layouts of tiles: storage index maps (`Layout`, swizzles, padding), thread distributions (`Fragment`) and the
CuTe layout algebra (`tilelang.layout.cute`)."""

from __future__ import annotations

import importlib
from typing import Any

from tilelang.layout.fragment import (
    CyclicFragment,
    Fragment,
    fragment_vector_lanes,
    make_fully_replicated_layout_fragment,
)
from tilelang.layout.gemm_sp import make_cutlass_metadata_layout
from tilelang.layout.indexing import evaluate_index, linearize, unravel
from tilelang.layout.layout import (
    Layout,
    PaddedLayout,
    from_index_map,
    identity_layout,
    make_padded_layout,
    register_layout_kind,
)
from tilelang.layout.partial_fragment import PartialFragment, make_fully_replicated_partial_fragment
from tilelang.layout.swizzle import (
    SwizzledLayout,
    get_swizzle_layout,
    make_full_bank_swizzled_layout,
    make_gemm_fragment_8x8,
    make_gemm_fragment_8x8_transposed,
    make_half_bank_swizzled_layout,
    make_linear_layout,
    make_mma_swizzle_layout,
    make_quarter_bank_swizzled_layout,
    make_swizzled_layout,
    make_tcgen05mma_swizzled_layout,
    make_volta_swizzled_layout,
    make_wgmma_swizzled_layout,
)
from tilelang.layout.swizzle_mode import SwizzleMode

__all__ = ["CyclicFragment", "Fragment", "Layout", "PaddedLayout", "PartialFragment", "SwizzleMode", "SwizzledLayout",
           "cute", "evaluate_index", "fragment_vector_lanes", "from_index_map", "get_swizzle_layout", "identity_layout",
           "linearize", "make_cutlass_metadata_layout", "make_full_bank_swizzled_layout",
           "make_fully_replicated_layout_fragment", "make_fully_replicated_partial_fragment", "make_gemm_fragment_8x8",
           "make_gemm_fragment_8x8_transposed", "make_half_bank_swizzled_layout", "make_linear_layout",
           "make_mma_swizzle_layout", "make_padded_layout",
           "make_quarter_bank_swizzled_layout", "make_swizzled_layout", "make_tcgen05mma_swizzled_layout",
           "make_volta_swizzled_layout", "make_wgmma_swizzled_layout", "register_layout_kind", "unravel"]


def __getattr__(name: str) -> Any:
    if name == "cute":  # the CuTe algebra imports TVM's FFI object machinery: load it on first use
        return importlib.import_module("tilelang.layout.cute")
    raise AttributeError(f"module 'tilelang.layout' has no attribute {name!r}")
