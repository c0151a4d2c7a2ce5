"""Layouts of tiles: storage index maps (`Layout`, swizzles) and thread distributions (`Fragment`)."""

from tilelang.layout.layout import Fragment, Layout, identity_layout, linearize, unravel
from tilelang.layout.swizzle import SwizzledLayout, make_swizzled_layout

__all__ = ["Fragment", "Layout", "SwizzledLayout", "identity_layout", "linearize", "make_swizzled_layout", "unravel"]
