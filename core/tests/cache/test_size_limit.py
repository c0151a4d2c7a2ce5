"""``TILELANG_CACHE_MAX_BYTES``: parsing, LRU eviction order (hits count as use), the entry just written is never
evicted, readers of an evicted entry see a miss, concurrent writers, and real compiled CPU kernels."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from tilelang.cache.store import DiskStore
from tilelang.cache.usage import cache_items
from tilelang.env import env, parse_byte_size


def _files(tag: str, size: int = 4000) -> dict[str, bytes]:
    return {"artifact.json": f'{{"name": "{tag}"}}'.encode(), "kernel.so": tag.encode() * (size // len(tag))}


def _entry_size(store: DiskStore, key: str) -> int:
    return sum(p.stat().st_size for p in store.entry_dir(key).iterdir())


def _keys(store: DiskStore) -> set[str]:
    return {i.key for i in cache_items(store)}


@pytest.mark.parametrize("text, expected", [("10G", 10 << 30), ("500M", 500 << 20), ("64k", 64 << 10),
                                            ("1.5GiB", 3 << 29), ("2 TB", 2 << 40), ("12345", 12345)])
def test_sizes_with_units(text, expected):
    assert parse_byte_size(text) == expected


def test_limit_setting(monkeypatch):
    assert env.cache_max_bytes() is None
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "500M")
    assert env.cache_max_bytes() == 500 << 20
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "0")
    assert env.cache_max_bytes() is None  # 0: no limit
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "ten gigs")
    with pytest.raises(ValueError, match=r"TILELANG_CACHE_MAX_BYTES='ten gigs' is not a size.*10G"):
        env.cache_max_bytes()
    store = DiskStore()
    with pytest.raises(ValueError, match="TILELANG_CACHE_MAX_BYTES='ten gigs'"):
        store.put("ab" * 32, _files("x"))  # said before anything is written
    assert cache_items(store) == [] and not list((store.root / "tmp").glob("*"))


def test_least_recently_used_entries_go_first(cache_dir, monkeypatch):
    store = DiskStore()
    assert store.put("a1" * 32, _files("a"))
    one = _entry_size(store, "a1" * 32)
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", str(3 * one + one // 2))  # room for three entries
    for tag in "bcd":
        assert store.put(f"{tag}1" * 32, _files(tag))
    assert _keys(store) == {"b1" * 32, "c1" * 32, "d1" * 32}  # d pushed it over: a, the oldest, went
    assert store.get("b1" * 32) is not None  # b is used: c is now the least recently used
    assert store.put("e1" * 32, _files("e"))
    assert _keys(store) == {"b1" * 32, "d1" * 32, "e1" * 32}
    assert dict(store.get("e1" * 32)) == _files("e") and store.get("c1" * 32) is None
    assert sum(i.size for i in cache_items(store)) <= 3 * one + one // 2


def test_the_entry_just_written_is_never_evicted(cache_dir, monkeypatch):
    store = DiskStore()
    for tag in "ab":
        store.put(f"{tag}2" * 32, _files(tag))
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "1k")  # smaller than any entry
    assert store.put("c2" * 32, _files("c"))
    assert _keys(store) == {"c2" * 32} and dict(store.get("c2" * 32)) == _files("c")


def test_a_reader_of_an_evicted_entry_sees_a_miss(cache_dir, monkeypatch):
    """Writers evict under a tiny limit while readers read: every read is the whole entry or a miss."""
    store = DiskStore()
    store.put("00" * 32, _files("seed"))
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", str(2 * _entry_size(store, "00" * 32)))
    keys = [f"{i:02x}" * 32 for i in range(1, 40)]
    expected = {k: _files(k[:2]) for k in keys}
    errors: list[BaseException] = []
    outcomes = {"hit": 0, "miss": 0}
    done = threading.Event()

    def reader() -> None:
        try:
            while not done.is_set():
                for k in keys:
                    got = store.get(k)
                    if got is None:
                        outcomes["miss"] += 1
                    else:
                        assert dict(got) == expected[k]
                        outcomes["hit"] += 1
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for k in keys:
            store.put(k, expected[k])
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not errors, errors
    assert outcomes["miss"]
    assert len(_keys(store)) <= 2 and dict(store.get(keys[-1])) == expected[keys[-1]]
    assert not any((cache_dir / "tmp").iterdir())


def test_an_entry_evicted_between_manifest_and_files_is_a_miss(cache_dir, monkeypatch):
    """The exact interleaving: the manifest was read, then another process evicts the entry."""
    from pathlib import Path

    from tilelang.cache.usage import remove_item

    store = DiskStore()
    store.put("ab" * 32, _files("x"))
    (item,) = cache_items(store)
    real_read = Path.read_bytes

    def read_then_evict(self: Path) -> bytes:
        if self.name == "kernel.so":
            assert remove_item(store, item)  # the other process wins the race
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_then_evict)
    assert store.get("ab" * 32) is None
    monkeypatch.setattr(Path, "read_bytes", real_read)
    assert store.put("ab" * 32, _files("y")) and dict(store.get("ab" * 32)) == _files("y")


WRITER = """
import sys
from tilelang.cache.store import DiskStore
store = DiskStore()
for i in range(12):
    store.put(f"{sys.argv[1]}{i:02x}" * 16, {"a.bin": sys.argv[1].encode() * 2000})
print("done")
"""


def test_concurrent_writer_processes_respect_the_limit(cache_dir):
    env_vars = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir), "TILELANG_CACHE_MAX_BYTES": "40k"}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, tag], env=env_vars, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for tag in ("aa", "bb", "cc")]
    for p in procs:
        out, err = p.communicate(timeout=180)
        assert out.strip() == "done", err
    store = DiskStore()
    items = cache_items(store)
    assert 0 < sum(i.size for i in items) <= 40 << 10
    for item in items:
        assert store.get(item.key) is not None  # whatever survived is whole
    assert not any((cache_dir / "tmp").iterdir())


@pytest.mark.backend("llvm")
def test_compiled_cpu_kernels_are_evicted_least_recently_used_first(cache_dir, monkeypatch):
    import torch

    import tilelang
    import tilelang.language as T
    from tilelang.cache.manager import kernel_cache

    def program(scale: float):
        @T.prim_func
        def scaled(A: T.Tensor((8, 8), "float32"), C: T.Tensor((8, 8), "float32")):
            with T.Kernel(1, is_cpu=True):
                for i, j in T.Parallel(8, 8):
                    C[i, j] = A[i, j] * scale

        return scaled

    def run(scale: float) -> tilelang.JITKernel:
        kernel = tilelang.compile(program(scale), out_idx=[-1], target="cpu")
        a = torch.randn(8, 8)
        torch.testing.assert_close(kernel(a), a * scale)
        return kernel

    store = DiskStore()
    run(1.0)
    (first,) = cache_items(store)
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", str(int(first.size * 2.5)))
    run(2.0)
    kernel_cache.clear(disk=False)  # from here on, only the disk remembers
    assert run(1.0).from_cache  # a disk hit: kernel 1.0 is now more recent than 2.0
    run(3.0)  # over the limit: 2.0, the least recently used, is evicted
    kernel_cache.clear(disk=False)
    assert run(1.0).from_cache and run(3.0).from_cache
    assert not run(2.0).from_cache  # compiled again
    assert len(cache_items(store)) == 2


@pytest.mark.backend("llvm")
def test_a_kernel_whose_entry_vanishes_after_the_read_still_loads(cache_dir, monkeypatch):
    """Another process evicts (or clears) the entry between the disk read and the library load."""
    import torch

    import tilelang
    import tilelang.language as T
    from tilelang.cache.manager import kernel_cache
    from tilelang.cache.usage import remove_item

    @T.prim_func
    def add_one(A: T.Tensor((8,), "float32"), C: T.Tensor((8,), "float32")):
        with T.Kernel(1, is_cpu=True):
            for i in T.Parallel(8):
                C[i] = A[i] + 1.0

    tilelang.compile(add_one, out_idx=[-1], target="cpu")
    kernel_cache.clear(disk=False)
    store = DiskStore()
    real_load = kernel_cache.load_artifact

    def load_then_vanish(key: str):
        artifact = real_load(key)
        for item in cache_items(store):
            assert remove_item(store, item)
        return artifact

    monkeypatch.setattr(kernel_cache, "load_artifact", load_then_vanish)
    kernel = tilelang.compile(add_one, out_idx=[-1], target="cpu")
    assert kernel.from_cache and cache_items(store) == []
    a = torch.randn(8)
    torch.testing.assert_close(kernel(a), a + 1)
