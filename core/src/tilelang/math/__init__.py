"""Integer helpers of the reference's ``tilelang.math`` (also ``tilelang.cdiv`` / ``tilelang.next_power_of_2``)."""

from __future__ import annotations

__all__ = ["cdiv", "next_power_of_2"]


def next_power_of_2(x: int) -> int:
    """The smallest power of two >= `x` (1 for x <= 1)."""
    return 1 << (int(x) - 1).bit_length() if x > 1 else 1


def cdiv(a: int, b: int) -> int:
    """Ceiling division of integers: ``(a + b - 1) // b``."""
    return (a + b - 1) // b
