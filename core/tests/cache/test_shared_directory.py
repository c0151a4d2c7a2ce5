"""A cache directory shared by several hosts: host-qualified temporaries, clean-up of this host's dead writers
only, and durable atomic writes (every file fsync-ed before the rename that publishes it)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilelang.cache.atomic import host_tag, is_stale_own_temporary, parse_temporary_name, temporary_name
from tilelang.cache.store import DiskStore
from tilelang.cache.usage import summary

FILES = {"artifact.json": b'{"name": "k"}', "kernel.so": b"\x7fELF" + b"x" * 3000}

# A writer that pretends to run on host argv[2] (hostname "" means: the real one) and writes slowly.
WRITER = """
import socket, sys
if sys.argv[2]:
    socket.gethostname = lambda: sys.argv[2]
from tilelang.cache.store import DiskStore
DiskStore().put(sys.argv[1], {"a.bin": b"a" * 1000, "b.bin": b"b" * 1000, "c.bin": b"c" * 1000})
print("done")
"""


def _temporaries(root: Path) -> list[str]:
    tmp = root / "tmp"
    return sorted(p.name for p in tmp.iterdir()) if tmp.exists() else []


def _kill_writer_mid_write(cache_dir: Path, key: str, hostname: str) -> str:
    """Start a slow writer as `hostname`, SIGKILL it between two files; the name of the temporary it left."""
    before = set(_temporaries(cache_dir))
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir), "TILELANG_CACHE_WRITE_DELAY": "30"}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, key, hostname], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    try:
        while time.time() < deadline:
            new = [n for n in set(_temporaries(cache_dir)) - before if any((cache_dir / "tmp" / n).iterdir())]
            if new:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the writer never started writing: {proc.stderr.read() if proc.poll() is not None else ''}")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    (name,) = new
    assert parse_temporary_name(name)[1] == proc.pid
    return name


def test_temporary_names_carry_host_and_pid():
    name = temporary_name("ab" * 32)
    assert parse_temporary_name(name) == (host_tag(), os.getpid())
    assert name.startswith("ab" * 12 + ".")
    assert parse_temporary_name(temporary_name("x")) != parse_temporary_name("x.1234.abcdefabcdef")
    # names that are not ours: a legacy ``<name>.<pid>.<random>``, a compiler's scratch file
    for other in ("deadbeef.1234.abcdefabcdef", "tmpk2j3h4.c", "kernel.so", "a.b.c.d"):
        assert parse_temporary_name(other) is None and not is_stale_own_temporary(other)


def test_host_tag_is_path_safe_and_keeps_long_hostnames_apart(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "gpu01.cluster.example.org")
    tag = host_tag()
    assert "." not in tag and tag.startswith("gpu01_cluster_example_org")
    assert parse_temporary_name(temporary_name("k")) == (tag, os.getpid())
    long_a = "node-" + "x" * 60 + "-0001"
    long_b = "node-" + "x" * 60 + "-0002"
    monkeypatch.setattr(socket, "gethostname", lambda: long_a)
    tag_a = host_tag()
    monkeypatch.setattr(socket, "gethostname", lambda: long_b)
    assert host_tag() != tag_a and len(tag_a) < 64


def test_a_second_hosts_temporaries_survive_clean_up(cache_dir, monkeypatch):
    """A writer on host node-b dies mid-write: its pid means nothing here, so only node-b may remove it."""
    store = DiskStore()
    theirs = _kill_writer_mid_write(cache_dir, "99" * 32, "node-b")
    ours = _kill_writer_mid_write(cache_dir, "98" * 32, "")
    assert "node-b" in theirs and parse_temporary_name(ours)[0] == host_tag()
    assert summary(store, None)["temporaries"] == {"this host, writing": 0, "this host, stale": 1,
                                                   "other hosts": 1, "unrecognised": 0}

    store.collect_garbage()
    assert _temporaries(cache_dir) == [theirs]  # ours (dead pid, this host) went; node-b's stays
    assert store.put("aa" * 32, FILES) and dict(store.get("aa" * 32)) == FILES  # a writer's own clean-up, too
    store.clear()
    assert _temporaries(cache_dir) == [theirs]
    assert store.get("99" * 32) is None  # nothing half-written is visible

    monkeypatch.setattr(socket, "gethostname", lambda: "node-b")  # now we are node-b: its dead writer is ours
    assert is_stale_own_temporary(theirs)
    store.collect_garbage()
    assert _temporaries(cache_dir) == []


def test_live_writers_and_unknown_names_are_kept(cache_dir):
    store = DiskStore()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        tmp = cache_dir / "tmp"
        tmp.mkdir(parents=True)
        live = f"{'cd' * 12}.{host_tag()}.{sleeper.pid}.{'0' * 12}"
        mine = temporary_name("ef" * 32)
        for name in (live, mine, "deadbeef.1.abcdefabcdef", "tmpabc123.c"):
            (tmp / name).mkdir()
        store.collect_garbage()
        assert _temporaries(cache_dir) == sorted([live, mine, "deadbeef.1.abcdefabcdef", "tmpabc123.c"])
    finally:
        sleeper.kill()
        sleeper.wait()
    store.collect_garbage()  # the sleeper is gone now: its temporary is this host's stale one
    assert live not in _temporaries(cache_dir)


def test_every_file_is_fsynced_before_publication(cache_dir, monkeypatch):
    """Files, the manifest and records reach the disk (fsync) while still under tmp/, before the rename."""
    import tilelang.cache.atomic as atomic

    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    if not Path("/proc/self/fd").exists():
        pytest.skip("needs /proc to name file descriptors")
    monkeypatch.setattr(atomic.os, "fsync", spy)
    store = DiskStore()
    assert store.put("ab" * 32, FILES)
    # every file was synced inside its temporary directory, i.e. before the rename published it
    files = [Path(p) for p in synced if Path(p).parent.parent == cache_dir / "tmp"]
    assert sorted(p.name for p in files) == sorted([*FILES, "manifest.json"])
    assert str(store.entry_dir("ab" * 32).parent) in synced  # the rename itself made durable
    synced.clear()
    store.put_record("jit", "k1", {"key": "abc"})
    assert Path(synced[0]).parent == cache_dir / "tmp"
    assert store.get_record("jit", "k1") == {"key": "abc"}
    assert _temporaries(cache_dir) == []
