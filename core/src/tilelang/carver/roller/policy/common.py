"""Integer helpers of the roller policies: factors and coalescing estimates."""

from __future__ import annotations

import math

__all__ = ["get_all_factors", "factorize", "coalesced_factor", "coalesced_tensor_shape"]


def get_all_factors(n: int) -> list[int]:
    """Every divisor of `n`, ascending."""
    n = int(n)
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    large = [n // d for d in reversed(small) if d * d != n]
    return small + large


def factorize(n: int) -> list[int]:
    """The prime factors of `n`, ascending, with multiplicity."""
    n, primes, d = int(n), [], 2
    while n > 1:
        if n % d:
            d += 1
            continue
        primes.append(d)
        n //= d
    return primes


def coalesced_factor(subtensor: list[int], tensor: list[int]) -> int:
    """Elements of `subtensor` that are contiguous in memory when it is a tile of row-major `tensor`."""
    if len(subtensor) == 1 or int(subtensor[-1]) != int(tensor[-1]):
        return int(subtensor[-1])
    return int(subtensor[-1]) * coalesced_factor(subtensor[:-1], tensor[:-1])


def coalesced_tensor_shape(subtensor: list[int], tensor: list[int], transaction_size: int) -> float:
    """Elements moved when reading the tile in transactions of `transaction_size` elements."""
    elements = math.prod(int(x) for x in subtensor)
    if elements == 0:
        return 0
    run = coalesced_factor(subtensor, tensor)
    return transaction_size * elements / min(transaction_size, run)
