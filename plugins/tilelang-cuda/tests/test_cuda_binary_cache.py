"""``tilelang.cache.cuda_binary_cache`` (the CUDA plugin's `tilelang_cuda.cuda_binary_cache`): nvcc's binaries in
core's cache directory, written atomically, marked as used on a hit and evicted under the size limit."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tilelang.cache.store import DiskStore
from tilelang.cache.usage import cache_items


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh TILELANG_CACHE_DIR, cache enabled, no size limit."""
    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    for name in ("TILELANG_DISABLE_CACHE", "TILELANG_CACHE_WRITE_DELAY", "TILELANG_CACHE_MAX_BYTES"):
        monkeypatch.delenv(name, raising=False)
    return path


def _temporaries(root: Path) -> list[str]:
    tmp = root / "tmp"
    return sorted(p.name for p in tmp.iterdir()) if tmp.exists() else []


def _files(tag: str, size: int = 4000) -> dict[str, bytes]:
    return {"artifact.json": f'{{"name": "{tag}"}}'.encode(), "kernel.so": tag.encode() * (size // len(tag))}


def _entry_size(store: DiskStore, key: str) -> int:
    return sum(p.stat().st_size for p in store.entry_dir(key).iterdir())


def _keys(store: DiskStore) -> set[str]:
    return {i.key for i in cache_items(store)}


def test_cuda_binary_cache_writes_atomically_and_marks_use(cache_dir):
    from tilelang.cache.cuda_binary_cache import CUDABinaryCache

    key = CUDABinaryCache.make_key(code="__global__ void k() {}", target_kind="cuda", target_arch="sm_90a",
                                   target_code=["sm_90a"], compile_format="cubin")
    CUDABinaryCache.save(key, "cubin", b"\x7fELF-cubin")
    path = Path(CUDABinaryCache.get_path(key, "cubin"))
    assert path.read_bytes() == b"\x7fELF-cubin" and path.is_relative_to(cache_dir)
    assert _temporaries(cache_dir) == [] and [p.name for p in path.parent.iterdir()] == [path.name]
    os.utime(path, (1_000_000, 1_000_000))
    assert CUDABinaryCache.load(key, "cubin") == b"\x7fELF-cubin"
    assert path.stat().st_mtime > time.time() - 60  # a hit is a use
    path.unlink()  # evicted by someone else: a miss
    assert CUDABinaryCache.load(key, "cubin") is None


def test_binaries_count_towards_the_limit_and_are_evicted_too(cache_dir, monkeypatch):
    from tilelang.cache.cuda_binary_cache import CUDABinaryCache

    store = DiskStore()
    CUDABinaryCache.save("f" * 64, "cubin", b"c" * 6000)
    store.put("a3" * 32, _files("a"))
    one = _entry_size(store, "a3" * 32)
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", str(2 * 6000 + one + one // 2))  # two binaries, one entry
    store.put("b3" * 32, _files("b"))
    assert CUDABinaryCache.load("f" * 64, "cubin") is not None  # fits; and now used more recently than a3
    CUDABinaryCache.save("e" * 64, "cubin", b"e" * 6000)  # over: a3, the least recently used, goes
    assert _keys(store) == {"b3" * 32, "f" * 64 + ".cubin", "e" * 64 + ".cubin"}
