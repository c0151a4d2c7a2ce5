"""Shared-memory swizzles: XOR layouts that spread a tile's rows over memory banks.

A swizzle permutes elements inside each row in units of 16 bytes so that a column walk of the tile hits
different banks. It changes only performance, never results: the pipeline applies it to every access
(`tilelang.transform.apply_layouts`), and a permutation of storage reads back what was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.layout.layout import Layout, register_layout_kind, tile_shape_and_dtype

_DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4,
                "float8_e4m3fn": 1, "float8_e5m2": 1, "int16": 2, "int64": 8, "uint16": 2, "uint32": 4,
                "uint64": 8, "bool": 1}


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of `dtype` (4 for an unknown one)."""
    return _DTYPE_BYTES.get(str(dtype), 4)


def _period(cols: int, vec: int, swizzle_bytes: int) -> int:
    """Rows in one XOR period: the largest power of two <= ``swizzle_bytes / 16`` that divides the number of
    16-byte units of a row (so the XOR stays inside the row: a permutation)."""
    if cols % vec:
        return 1
    units = cols // vec
    period = 1
    while period * 2 <= min(swizzle_bytes // 16, units) and units % (period * 2) == 0:
        period *= 2
    return period


class SwizzledLayout(Layout):
    """``(r, c) -> (r, (c // vec ^ r % period) * vec + c % vec)`` over the last two dims (16-byte vectors)."""

    kind = "swizzle"

    def __init__(self, shape: Sequence[Any], dtype: str, swizzle_bytes: int = 128):
        if isinstance(swizzle_bytes, bool) or not isinstance(swizzle_bytes, int) or swizzle_bytes < 16:
            raise ValueError(f"swizzle_bytes must be an int >= 16, got {swizzle_bytes!r}")
        vec = max(1, 16 // dtype_bytes(dtype))
        cols = getattr(shape[-1], "value", shape[-1]) if len(shape) >= 2 else 0
        period = _period(int(cols), vec, swizzle_bytes) if isinstance(cols, int) and cols > 0 else 1

        def forward(idx: list[Any]) -> list[Any]:
            if period == 1:
                return idx
            *lead, r, c = idx
            return [*lead, r, ((c // vec) ^ (r % period)) * vec + c % vec]

        super().__init__(shape, forward, params={"dtype": str(dtype), "swizzle_bytes": swizzle_bytes})
        self.period = period


def make_swizzled_layout(buffer_or_shape: Any, dtype: str | None = None, swizzle_bytes: int = 128) -> Layout:
    """The bank-conflict-free layout of a shared tile (a buffer, or a shape with a dtype)."""
    shape, dtype = tile_shape_and_dtype(buffer_or_shape, dtype)
    if dtype is None:
        raise ValueError("make_swizzled_layout needs a dtype when given a shape")
    return SwizzledLayout(shape, dtype, swizzle_bytes)


def _swizzle_from_ir(fields: dict[str, Any], shape: list[Any], dtype: str | None) -> Layout:
    dt = fields.get("dtype", dtype)
    if dt is None:
        raise ValueError("a swizzle layout needs a dtype")
    return SwizzledLayout(shape, str(dt), int(fields.get("swizzle_bytes", 128)))


register_layout_kind("swizzle", _swizzle_from_ir)
