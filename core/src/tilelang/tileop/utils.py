"""Index arithmetic for tile-op implementations -- public, for backends' tile ops too (the backend SDK,
docs/writing_a_backend.md): a region's non-unit dims and loop indices, casts, dtypes, guarded stores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["nonunit_dims", "region_indices", "cast", "dtype_of", "guarded"]


def nonunit_dims(region: Any) -> list[int]:
    return [d for d, r in enumerate(region.region) if not C.is_const(r.extent, 1)]


def region_indices(region: Any, dims: Sequence[int], loop_vars: Sequence[Any]) -> list[Any]:
    """Indices of `region`'s buffer: ``min + v`` on `dims` (one loop var each), ``min`` elsewhere."""
    idx = [r.min for r in region.region]
    for d, v in zip(dims, loop_vars):
        idx[d] = C.add(region.region[d].min, v)
    return idx


def cast(dtype: str, value: Any) -> Any:
    if isinstance(value, (int, float)):
        return tirx.const(value, dtype)
    return value if str(value.ty.dtype if hasattr(value, "ty") else value.dtype) == dtype else tirx.Cast(dtype, value)


def dtype_of(value: Any) -> str:
    return str(value.dtype) if hasattr(value, "dtype") else str(value.ty.dtype)


def guarded(cond: Any, stmt: Any) -> Any:
    return stmt if cond is None else tirx.IfThenElse(cond, stmt, None)
