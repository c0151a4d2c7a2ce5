"""The on-disk store and cache keys: atomic writes, damage detection, kill -9 mid-write, concurrent writers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tilelang.cache.keys import Unkeyable, canonical, digest, function_fingerprint, target_fingerprint
from tilelang.cache.store import DiskStore

FILES = {"artifact.json": b'{"name": "k"}', "kernel.so": b"\x7fELF" + b"x" * 5000}


def _leftovers(root: Path) -> list[Path]:
    tmp = root / "tmp"
    return list(tmp.iterdir()) if tmp.exists() else []


def test_put_get_roundtrip(cache_dir):
    store = DiskStore()
    assert store.root == cache_dir and store.get("ab" * 32) is None
    assert store.put("ab" * 32, FILES)
    got = store.get("ab" * 32)
    assert dict(got) == FILES and got.paths["kernel.so"].read_bytes() == FILES["kernel.so"]
    assert _leftovers(cache_dir) == []


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete-file", "bad-manifest"])
def test_damaged_entry_is_a_miss_and_removed(cache_dir, damage):
    store = DiskStore()
    key = "cd" * 32
    store.put(key, FILES)
    entry = store.entry_dir(key)
    if damage == "truncate":
        (entry / "kernel.so").write_bytes(FILES["kernel.so"][:100])
    elif damage == "flip":
        (entry / "kernel.so").write_bytes(b"Y" + FILES["kernel.so"][1:])
    elif damage == "delete-file":
        (entry / "artifact.json").unlink()
    else:
        (entry / "manifest.json").write_text("{not json")
    assert store.get(key) is None
    assert not entry.exists()
    assert store.put(key, FILES) and dict(store.get(key)) == FILES  # rebuilt


def test_second_writer_loses_cleanly(cache_dir):
    store = DiskStore()
    assert store.put("ef" * 32, FILES)
    assert not store.put("ef" * 32, {**FILES, "kernel.so": b"other"})
    assert dict(store.get("ef" * 32)) == FILES
    assert _leftovers(cache_dir) == []


def test_concurrent_writers_threads(cache_dir):
    store = DiskStore()
    results = []
    threads = [threading.Thread(target=lambda: results.append(store.put("12" * 32, FILES))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1 and dict(store.get("12" * 32)) == FILES
    assert _leftovers(cache_dir) == []


WRITER = """
import sys
from tilelang.cache.store import DiskStore
DiskStore().put(sys.argv[1], {"a.bin": b"a" * 1000, "b.bin": b"b" * 1000, "c.bin": b"c" * 1000})
print("done")
"""


def _writer(cache_dir: Path, key: str, delay: str) -> subprocess.Popen:
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir), "TILELANG_CACHE_WRITE_DELAY": delay}
    return subprocess.Popen([sys.executable, "-c", WRITER, key], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_kill_9_during_write_loses_nothing_and_corrupts_nothing(cache_dir):
    store = DiskStore()
    store.put("00" * 32, FILES)  # an existing good entry must survive
    key = "99" * 32
    proc = _writer(cache_dir, key, "30")
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the writer is between files
        if any(p.is_dir() and any(p.iterdir()) for p in _leftovers(cache_dir)):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("the writer never started writing")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert store.get(key) is None  # nothing half-written is visible
    assert dict(store.get("00" * 32)) == FILES
    assert _leftovers(cache_dir)  # the dead writer's temp dir ...
    other = _writer(cache_dir, key, "0")
    assert other.communicate(timeout=120)[0].strip() == "done"
    assert store.get(key) is not None and store.get(key)["b.bin"] == b"b" * 1000
    assert _leftovers(cache_dir) == []  # ... is collected by the next writer


def test_concurrent_writer_processes(cache_dir):
    procs = [_writer(cache_dir, "77" * 32, "0.05") for _ in range(4)]
    for p in procs:
        assert p.communicate(timeout=120)[0].strip() == "done"
    assert DiskStore().get("77" * 32)["c.bin"] == b"c" * 1000
    assert _leftovers(cache_dir) == []


def test_records_are_atomic_json(cache_dir):
    store = DiskStore()
    store.put_record("jit", "k1", {"key": "abc"})
    assert store.get_record("jit", "k1") == {"key": "abc"}
    store.record_path("jit", "k2").write_text("{broken")
    assert store.get_record("jit", "k2") is None
    assert _leftovers(cache_dir) == []


def test_canonical_values():
    import torch

    assert canonical((1, "a", None)) == canonical((1, "a", None))
    assert canonical((1, 2)) != canonical([1, 2])
    assert canonical({"b": 1, "a": 2}) == canonical({"a": 2, "b": 1})
    assert canonical(torch.float16) == ["torch", "torch.float16"]
    assert canonical(1.0) != canonical(1)
    with pytest.raises(Unkeyable):
        canonical(object())
    with pytest.raises(Unkeyable):
        canonical(torch.zeros(2))


def test_tvm_containers_key_like_python_ones():
    import tvm_ffi

    assert canonical(tvm_ffi.convert(["cpu", "x"])) == canonical(["cpu", "x"])
    assert canonical(tvm_ffi.convert({"keys": ["cpu"]})) == canonical(tvm_ffi.convert({"keys": ["cpu"]}))
    assert canonical(tvm_ffi.convert({"a": [1]})) != canonical(tvm_ffi.convert({"a": [2]}))


@pytest.mark.backend("llvm")
def test_a_tvm_target_object_compiles_and_hits_the_cache(cache_dir):
    import torch
    import tvm

    import tilelang
    from tilelang.testing import corpus

    func = corpus.elementwise_add(M=64, N=64).prim_func()
    first = tilelang.compile(func, target=tvm.target.Target({"kind": "llvm"}))
    again = tilelang.compile(func, target=tvm.target.Target({"kind": "llvm"}))
    assert first.cache_key is not None and again.cache_key == first.cache_key  # keyed, and keyed alike
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    again(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_function_fingerprint_tracks_closures_globals_and_helpers():
    def make(scale):
        def f(x):
            return x * scale + OFFSET + helper(x)

        return f

    assert function_fingerprint(make(1)) == function_fingerprint(make(1))
    assert function_fingerprint(make(1)) != function_fingerprint(make(2))
    before = function_fingerprint(make(1))
    globals()["OFFSET"] = 5
    try:
        assert function_fingerprint(make(1)) != before
    finally:
        globals()["OFFSET"] = 0


OFFSET = 0


def helper(x):
    return x


def test_target_fingerprint_adds_host_cpu_only_without_mcpu():
    assert target_fingerprint({"kind": "llvm"})[-1] is not None
    assert target_fingerprint({"kind": "llvm", "mcpu": "znver4"})[-1] is None
    assert target_fingerprint({"kind": "cuda", "arch": "sm_90a"})[-1] is None
    assert digest(1, "a") == digest(1, "a") != digest(1, "b")


@pytest.mark.backend("llvm")
def test_environment_snapshot_is_reused(cache_dir):
    from tilelang.cache import environment

    environment.snapshot.cache_clear()
    first = environment.snapshot()
    assert "apache-tvm" in first["versions"] and any(e[0] == "llvm" for e in first["entry_points"])
    assert list((cache_dir / "records" / "environment").glob("*.json"))
    environment.snapshot.cache_clear()
    assert environment.snapshot() == first


def test_environment_snapshot_watches_only_distribution_folders(cache_dir, tmp_path, monkeypatch):
    """Files written next to a script (a sys.path folder without distributions) keep the snapshot; a
    distribution installed into a watched folder makes the next process scan again."""
    from tilelang.cache import environment

    scans = []
    real_scan = environment._scan
    monkeypatch.setattr(environment, "_scan", lambda: scans.append(1) or real_scan())
    scripts, site = tmp_path / "scripts", tmp_path / "site"
    (site / "tl_fake_dist-1.0.dist-info").mkdir(parents=True)
    (site / "tl_fake_dist-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tl-fake-dist\n"
                                                                    "Version: 1.0\n")
    scripts.mkdir()
    monkeypatch.syspath_prepend(str(scripts))
    monkeypatch.syspath_prepend(str(site))

    def new_process():
        environment.snapshot.cache_clear()
        return environment.snapshot()

    def touch(folder: Path) -> None:
        os.utime(folder, ns=(time.time_ns(), time.time_ns() + 10**9 * (len(scans) + 1)))

    try:
        first = new_process()
        assert str(site) in first["watched"] and str(scripts) not in first["watched"]
        assert len(scans) == 1 and new_process() == first and len(scans) == 1
        (scripts / "output.log").write_text("written by the user's script")
        touch(scripts)
        assert new_process() == first and len(scans) == 1  # not a distribution folder: not rescanned
        (site / "tl_other-2.0.dist-info").mkdir()
        touch(site)
        new_process()
        assert len(scans) == 2  # a new distribution: scanned again
    finally:
        environment.snapshot.cache_clear()


def _write_package(root: Path, name: str, body: str) -> Path:
    pkg = root / name
    (pkg / "sub").mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "passes.py").write_text(body)
    return pkg / "sub" / "passes.py"


def test_package_stamp_tracks_source_edits(tmp_path, monkeypatch):
    from tilelang.cache import keys

    monkeypatch.syspath_prepend(str(tmp_path))
    source = _write_package(tmp_path, "tl_stamp_probe", "X = 1\n")
    keys.package_stamp.cache_clear()
    first = keys.package_stamp("tl_stamp_probe")
    assert "tl_stamp_probe" not in sys.modules  # found without importing it
    keys.package_stamp.cache_clear()
    assert keys.package_stamp("tl_stamp_probe") == first  # nothing changed: same digest
    source.write_text("X = 22\n")  # an edited pass (size and mtime change)
    os.utime(source, ns=(time.time_ns(), time.time_ns() + 10**9))
    keys.package_stamp.cache_clear()
    edited = keys.package_stamp("tl_stamp_probe")
    assert edited != first
    (source.parent / "extra.py").write_text("")  # a new module
    keys.package_stamp.cache_clear()
    assert keys.package_stamp("tl_stamp_probe") not in (first, edited)
    keys.package_stamp.cache_clear()
    assert keys.package_stamp("tl_no_such_package_xyz") == "absent"
    assert keys.package_stamp("tilelang") != "absent"


def test_package_stamp_tracks_device_header_edits(tmp_path, monkeypatch):
    """A plugin's ``.cuh`` helper headers are compiled into its kernels: editing one changes the stamp."""
    from tilelang.cache import keys

    monkeypatch.syspath_prepend(str(tmp_path))
    _write_package(tmp_path, "tl_stamp_header_probe", "X = 1\n")
    header = tmp_path / "tl_stamp_header_probe" / "include" / "helpers.cuh"
    header.parent.mkdir()
    header.write_text("__device__ int f() { return 1; }\n")
    keys.package_stamp.cache_clear()
    first = keys.package_stamp("tl_stamp_header_probe")
    header.write_text("__device__ int f() { return 22; }\n")
    os.utime(header, ns=(time.time_ns(), time.time_ns() + 10**9))
    keys.package_stamp.cache_clear()
    assert keys.package_stamp("tl_stamp_header_probe") != first
    keys.package_stamp.cache_clear()


@pytest.mark.backend("cpu")
def test_lowering_packages_are_core_and_the_kinds_plugins():
    from tilelang.cache import keys

    assert keys.lowering_packages(("no-such-kind",)) == ["tilelang"]
    for kind in ("llvm", "cpu"):
        packages = keys.lowering_packages((kind,))
        assert packages[0] == "tilelang" and len(packages) == 2  # core + the CPU plugin, nothing else


@pytest.mark.backend("llvm")
def test_edited_lowering_source_invalidates_cache_entries(tmp_path, monkeypatch, cache_dir):
    """A kernel cached before an edit of a lowering package is compiled again after it (new process = new
    digest; simulated here by clearing the per-process caches)."""
    import jit_kernels as kernels

    from tilelang.cache import keys
    from tilelang.cache.manager import kernel_cache

    monkeypatch.syspath_prepend(str(tmp_path))
    source = _write_package(tmp_path, "tl_fake_lowering", "PASS = 'v1'\n")
    real = keys.lowering_packages
    monkeypatch.setattr(keys, "lowering_packages", lambda kinds: [*real(kinds), "tl_fake_lowering"])

    def fresh_process_compile():
        keys.package_stamp.cache_clear()
        keys.sources_digest.cache_clear()
        kernel_cache.clear(disk=False)
        kernels.add.clear_kernels()
        return kernels.add(16, 8)

    try:
        assert not fresh_process_compile().from_cache
        assert fresh_process_compile().from_cache  # unchanged sources: a hit
        source.write_text("PASS = 'v2, edited'\n")
        os.utime(source, ns=(time.time_ns(), time.time_ns() + 10**9))
        kernel = fresh_process_compile()
        assert not kernel.from_cache  # the edit changed every key: compiled again
        assert fresh_process_compile().from_cache
    finally:
        keys.package_stamp.cache_clear()
        keys.sources_digest.cache_clear()
