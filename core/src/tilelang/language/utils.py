"""Index helpers of the reference's ``tilelang.language.utils``: flat index <-> coordinates, region extents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.ir import region as R


def index_to_coordinates(index: Any, shape: Sequence[Any]) -> list[Any]:
    """The row-major coordinates of flat `index` in `shape`."""
    coords = []
    for extent in reversed(list(shape)):
        coords.append(index % extent)
        index = index // extent
    return coords[::-1]


def linear_index(*args: Any) -> Any:
    """``linear_index(i, j, k, stride_j, stride_k)``: coordinates followed by the strides of all but the first
    dimension, as ``((i * stride_j) + j) * stride_k + k``."""
    if not args:
        raise ValueError("At least one index is required")
    if len(args) == 1:
        return args[0]
    n = (len(args) + 1) // 2
    coords, strides = args[:n], args[n:]
    if len(strides) != len(coords) - 1:
        raise ValueError("Stride count must be one less than coordinate count")
    out = coords[0]
    for c, s in zip(coords[1:], strides):
        out = out * s + c
    return out


def get_extent(data: Any) -> list[Any] | None:
    """The extents of a buffer (its shape) or region, None for one element or a scalar."""
    if R.is_buffer(data):
        return R.buffer_shape(data)
    if R.is_region(data):
        return [r.extent for r in data.region]
    return None


def get_buffer_elems(buffer: Any) -> Any:
    """The number of elements of `buffer`."""
    out: Any = 1
    for extent in R.buffer_shape(buffer):
        out = out * extent
    return out


__all__ = ["get_buffer_elems", "get_extent", "index_to_coordinates", "linear_index"]
