"""Layouts of tiles: storage index maps (`Layout`, swizzles, padding) and thread distributions (`Fragment`)."""

from tilelang.layout.layout import (
    Fragment,
    Layout,
    PaddedLayout,
    evaluate_index,
    fragment_vector_lanes,
    from_index_map,
    identity_layout,
    linearize,
    make_padded_layout,
    register_layout_kind,
    unravel,
)
from tilelang.layout.swizzle import SwizzledLayout, make_swizzled_layout

__all__ = ["Fragment", "Layout", "PaddedLayout", "SwizzledLayout", "evaluate_index", "fragment_vector_lanes",
           "from_index_map", "identity_layout", "linearize", "make_padded_layout", "make_swizzled_layout",
           "register_layout_kind", "unravel"]
