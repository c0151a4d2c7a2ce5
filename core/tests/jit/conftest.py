"""Fixtures for the JIT tests: an isolated kernel cache per test and hand-built CPU artifacts.

`make_artifact` builds a plain tirx PrimFunc (TVMScript) with TVM's LLVM builder into a `CompiledArtifact`,
so the JIT, cache and execution backend are tested without the TileLang front end or pipeline.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own TILELANG_CACHE_DIR and an empty in-memory cache, cache enabled."""
    from tilelang.cache.manager import kernel_cache

    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    monkeypatch.delenv("TILELANG_DISABLE_CACHE", raising=False)
    monkeypatch.delenv("TILELANG_CACHE_WRITE_DELAY", raising=False)
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
    yield path
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
