"""Scope tests for Metal's register-matrix buffers (``tilelang.metal.utils``)."""

from __future__ import annotations

from typing import Any

__all__ = ["is_metal_cooperative_tensor", "is_metal_simdgroup"]

SIMDGROUP_SCOPE = "metal.simdgroup"
COOPERATIVE_TENSOR_SCOPE = "metal.cooperative_tensor"


def _scope(buffer: Any) -> str:
    from tilelang.ir import region
    from tilelang.transform import utils as C

    return C.scope_of(region.buffer_of(buffer))


def is_metal_cooperative_tensor(buffer: Any) -> bool:
    """Whether `buffer` (a buffer, region or element) lives in Metal 4 cooperative-tensor storage."""
    return _scope(buffer) == COOPERATIVE_TENSOR_SCOPE


def is_metal_simdgroup(buffer: Any) -> bool:
    """Whether `buffer` (a buffer, region or element) is a set of 8x8 simdgroup matrices
    (``simdgroup_float8x8`` and friends: scope ``metal.simdgroup``)."""
    return _scope(buffer) == SIMDGROUP_SCOPE
