"""Fixtures shared by the CPU plugin's tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def tile_op_choices(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], list[str]]:
    """``watch(op)`` -> the list of implementation names LowerTileOps picks for `op` while the test runs."""
    import tilelang.transform.lower_tile_ops as lto

    real = lto.resolve_tile_op_impl
    watched: dict[str, list[str]] = {}

    def spy(op: str, target: Any, ctx: Any = None) -> Any:
        impl = real(op, target, ctx)
        if op in watched:
            watched[op].append(impl.name)
        return impl

    monkeypatch.setattr(lto, "resolve_tile_op_impl", spy)
    return lambda op: watched.setdefault(op, [])
