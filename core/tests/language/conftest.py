"""Front-end test configuration."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_leaked_state():
    """Every test starts and ends outside a kernel parse."""
    from tilelang.frontend import state

    assert state.current() is None
    yield
    assert state.current() is None
