"""2:4 structured-sparsity metadata: how many elements of A one metadata element indexes (groups of four along K
with two kept, 2-bit indices; fp32 keeps one of two)."""

from __future__ import annotations

from typing import Any

__all__ = ["GROUP_CONFIG", "get_e_factor", "get_e_replicate_factor"]

# A dtype -> (kept, group) elements
GROUP_CONFIG: dict[str, tuple[int, int]] = {
    "float32": (1, 2), "float16": (2, 4), "bfloat16": (2, 4), "int8": (2, 4), "uint8": (2, 4),
    "float8_e4m3": (2, 4), "float8_e4m3fn": (2, 4), "float8_e5m2": (2, 4),
}
_BITS_PER_INDEX_GROUP = 4


def _bits(dtype: Any) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(str(dtype)))


def get_e_factor(a_dtype: Any, meta_dtype: Any) -> int:
    """How many elements of A (dense K) one element of `meta_dtype` metadata covers."""
    key = str(a_dtype)
    if key not in GROUP_CONFIG:
        raise ValueError(f"2:4 sparsity is not defined for {a_dtype}; supported: {', '.join(GROUP_CONFIG)}")
    return (_bits(meta_dtype) // _BITS_PER_INDEX_GROUP) * GROUP_CONFIG[key][1]


def get_e_replicate_factor(a_dtype: Any) -> int:
    """How many consecutive threads share one metadata value (2 for 16- and 32-bit A, 1 for 8-bit)."""
    return 1 if _bits(a_dtype) <= 8 else 2
