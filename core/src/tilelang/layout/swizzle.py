"""Shared-memory swizzles: XOR layouts that spread a tile's rows over memory banks.

A swizzle permutes elements inside each row in units of 16 bytes so that a column walk of the tile hits
different banks. It changes only performance, never results, so a backend that ignores it stays correct.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.layout.layout import Layout

_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4,
                "float8_e4m3fn": 1, "float8_e5m2": 1, "int16": 2, "int64": 8}


class SwizzledLayout(Layout):
    """``(r, c) -> (r, (c // vec ^ r % period) * vec + c % vec)`` over the last two dims (16-byte vectors)."""

    kind = "swizzle"

    def __init__(self, shape: Sequence[Any], dtype: str, swizzle_bytes: int = 128):
        elem = _DTYPE_BYTES.get(str(dtype), 4)
        vec = max(1, 16 // elem)
        cols = int(shape[-1])
        period = max(1, min(swizzle_bytes // 16, cols // vec))

        def forward(idx: list[Any]) -> list[Any]:
            if period == 1:
                return idx
            *lead, r, c = idx
            return [*lead, r, ((c // vec) ^ (r % period)) * vec + c % vec]

        super().__init__(shape, forward, params={"dtype": str(dtype), "swizzle_bytes": swizzle_bytes})


def make_swizzled_layout(buffer_or_shape: Any, dtype: str | None = None, swizzle_bytes: int = 128) -> Layout:
    """The bank-conflict-free layout of a shared tile (a buffer, or a shape with a dtype)."""
    ty = getattr(buffer_or_shape, "ty", None)
    if ty is not None:
        shape, dtype = list(ty.shape), str(ty.dtype)
    else:
        shape = list(buffer_or_shape)
    if dtype is None:
        raise ValueError("make_swizzled_layout needs a dtype when given a shape")
    return SwizzledLayout(shape, dtype, swizzle_bytes)
