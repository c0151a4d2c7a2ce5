"""Fixtures for the disk cache tests: an isolated cache directory per test, no size limit unless a test sets one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own TILELANG_CACHE_DIR and an empty in-memory cache, cache enabled."""
    from tilelang.cache.manager import kernel_cache

    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    for name in ("TILELANG_DISABLE_CACHE", "TILELANG_CACHE_WRITE_DELAY", "TILELANG_CACHE_MAX_BYTES"):
        monkeypatch.delenv(name, raising=False)
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
    yield path
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
