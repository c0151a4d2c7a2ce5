"""What the layout makers need to know about a tile: its buffer, shape and element type."""

from __future__ import annotations

from typing import Any


def buffer_info(x: Any, required: bool = True) -> tuple[Any, list[Any], str] | None:
    """``(buffer, shape, dtype)`` of a buffer, a buffer element (``A[i, j]``) or a buffer region.

    Raises TypeError naming what was given when `x` is none of these (None when not `required`)."""
    from tilelang.ir import region as R

    try:
        buf = R.buffer_of(x)
    except TypeError:
        if required:
            raise TypeError(f"expected a buffer, a buffer element or a buffer region, got {type(x).__name__}: "
                            f"{x!r}") from None
        return None
    return buf, list(buf.ty.shape), str(buf.ty.dtype)


def dtype_bits(dtype: Any) -> int:
    """Bits of one element of `dtype` (a dtype name or a tvm DataType)."""
    import tvm

    try:
        return int(tvm.DataType(str(dtype)).bits) * max(1, int(tvm.DataType(str(dtype)).lanes))
    except Exception as exc:  # tvm raises its own error types for unknown names
        raise ValueError(f"unknown dtype {dtype!r}") from exc


def stride_and_continuous(shape: list[Any], what: str) -> tuple[int, int]:
    """The two trailing extents of a tile as ints (``(rows, cols)``); ValueError for fewer dims or symbolic ones."""
    from tilelang.layout.indexing import const_int

    if len(shape) < 2:
        raise ValueError(f"{what} needs a tile of at least 2 dims, got shape {shape}")
    rows, cols = const_int(shape[-2]), const_int(shape[-1])
    if rows is None or cols is None:
        raise ValueError(f"{what} needs constant trailing extents, got shape {shape}")
    return rows, cols
