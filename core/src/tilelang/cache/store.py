"""The on-disk store: crash-safe, concurrent-safe directories of files, plus small JSON records.

Layout under the cache root::

    kernels/<key[:2]>/<key>/   one entry: its files and ``manifest.json`` (sha256 + size of every file)
    records/<ns>/<key>.json    small JSON records (source key -> program key, autotuning results)
    tmp/                       entries being written: ``<name>.<host>.<pid>.<random>`` (`tilelang.cache.atomic`)

An entry is written in a fresh directory under ``tmp/`` (every file ``fsync``-ed, manifest last) and published
with one ``rename``: readers see a whole entry or none, and a process killed mid-write leaves only its ``tmp/``
directory, which the next writer on the same host removes once that pid is gone (another host's temporaries are
never removed: its pids mean nothing here). When two processes publish the same key, the second rename fails
and the loser discards its copy. Reads check every file against the manifest: a damaged entry is moved aside,
deleted and reported as a miss, so it is rebuilt; an entry that vanishes while being read (evicted or cleared
by another process) is a plain miss.

The manifest's modification time is the entry's last use: set when it is written and on every hit. With
``TILELANG_CACHE_MAX_BYTES`` set, a write that takes the cache over the limit evicts the least recently used
entries (`tilelang.cache.usage`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from tilelang import env
from tilelang.cache.atomic import fsync_directory, is_stale_own_temporary, temporary_name, write_atomic, write_durable

__all__ = ["DiskStore", "StoredFiles", "MANIFEST"]

MANIFEST = "manifest.json"
_FORMAT = 1


class StoredFiles(dict):
    """An entry's files (name -> bytes) that also knows where each lives on disk (`paths`)."""

    def __init__(self, data: dict[str, bytes], paths: dict[str, Path]):
        super().__init__(data)
        self.paths = paths


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DiskStore:
    """Entries and records under `root` (default: ``TILELANG_CACHE_DIR``)."""

    def __init__(self, root: str | os.PathLike[str] | None = None):
        self.root = Path(root) if root is not None else env.cache_dir()

    # ------------------------------------------------------------------------------------------ paths
    def entry_dir(self, key: str) -> Path:
        return self.root / "kernels" / key[:2] / key

    def record_path(self, namespace: str, key: str) -> Path:
        return self.root / "records" / namespace / f"{key}.json"

    @property
    def tmp_dir(self) -> Path:
        return self.root / "tmp"

    def _new_tmp(self, name: str) -> Path:
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        return self.tmp_dir / temporary_name(name)

    # ------------------------------------------------------------------------------------------ entries
    def get(self, key: str) -> StoredFiles | None:
        """The files of entry `key`, verified against its manifest; None when absent, vanished or damaged.

        A hit marks the entry as just used (the manifest's modification time), for LRU eviction.
        """
        entry = self.entry_dir(key)
        try:
            manifest = json.loads((entry / MANIFEST).read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            self._discard(entry)
            return None
        data: dict[str, bytes] = {}
        paths: dict[str, Path] = {}
        try:
            if manifest.get("format") != _FORMAT or manifest.get("key") != key:
                raise ValueError("manifest format or key mismatch")
            for name, meta in manifest["files"].items():
                blob = (entry / name).read_bytes()
                if len(blob) != meta["size"] or _sha256(blob) != meta["sha256"]:
                    raise ValueError(f"{name} does not match the manifest")
                data[name] = blob
                paths[name] = entry / name
        except FileNotFoundError:
            if not (entry / MANIFEST).exists():
                return None  # evicted or cleared by another process while we read it: a miss, not damage
            self._discard(entry)
            return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self._discard(entry)
            return None
        self.touch(key)
        return StoredFiles(data, paths)

    def touch(self, key: str) -> None:
        """Mark entry `key` as used now (nothing when it is gone or the cache is read-only)."""
        now = time.time_ns()
        try:
            os.utime(self.entry_dir(key) / MANIFEST, ns=(now, now))
        except OSError:
            pass

    def put(self, key: str, files: dict[str, bytes], meta: dict[str, Any] | None = None) -> bool:
        """Publish entry `key` atomically; False when another process published it first.

        `meta` (small, JSON-able: e.g. ``{"target": "cuda"}``) is kept in the manifest for `tilelang cache`.
        Over ``TILELANG_CACHE_MAX_BYTES``, least recently used entries other than this one are then evicted.
        """
        limit = env.cache_max_bytes()  # a malformed value is reported before anything is written
        self.collect_garbage()
        tmp = self._new_tmp(key)
        tmp.mkdir()
        try:
            delay = env.cache_write_delay()
            manifest: dict[str, Any] = {"format": _FORMAT, "key": key, "created": time.time(), "files": {}}
            if meta:
                manifest["meta"] = dict(meta)
            for name, blob in files.items():
                if "/" in name or name in (MANIFEST, "", ".", ".."):
                    raise ValueError(f"invalid cache file name {name!r}")
                write_durable(tmp / name, blob)
                manifest["files"][name] = {"sha256": _sha256(blob), "size": len(blob)}
                if delay:
                    time.sleep(delay)
            write_durable(tmp / MANIFEST, json.dumps(manifest, sort_keys=True).encode())
            now = time.time_ns()  # the clock's full resolution: file times may be coarser
            os.utime(tmp / MANIFEST, ns=(now, now))
            fsync_directory(tmp)
            final = self.entry_dir(key)
            final.parent.mkdir(parents=True, exist_ok=True)
            for _ in range(3):
                try:
                    os.rename(tmp, final)
                except OSError as exc:
                    if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
                else:
                    fsync_directory(final.parent)
                    if limit is not None:
                        from tilelang.cache.usage import enforce_limit

                        enforce_limit(self, limit, keep=final)
                    return True
                if self.get(key) is not None:  # someone else published a good entry
                    return False
                # a damaged entry was discarded by get(); try again
            return False
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _discard(self, entry: Path) -> None:
        """Move an entry aside (one rename, so readers never see half of it) and delete it."""
        if not entry.exists():
            return
        trash = self._new_tmp("trash")
        try:
            os.rename(entry, trash)
        except OSError:
            return  # someone else moved or replaced it
        shutil.rmtree(trash, ignore_errors=True)

    # ------------------------------------------------------------------------------------------ records
    def get_record(self, namespace: str, key: str) -> Any:
        """The JSON record `key` in `namespace`, or None."""
        try:
            return json.loads(self.record_path(namespace, key).read_bytes())
        except (OSError, ValueError):
            return None

    def put_record(self, namespace: str, key: str, value: Any) -> None:
        """Write a JSON record atomically (host-qualified temporary, ``fsync``, ``os.replace``)."""
        path = self.record_path(namespace, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(value, sort_keys=True).encode(), tmp_dir=self.tmp_dir)

    # ------------------------------------------------------------------------------------------ upkeep
    def collect_garbage(self) -> None:
        """Remove temporaries that this host's dead writers left behind (killed mid-write).

        Temporaries of other hosts sharing the directory, of live processes and of unknown form are kept.
        """
        try:
            names = os.listdir(self.tmp_dir)
        except FileNotFoundError:
            return
        for name in names:
            if not is_stale_own_temporary(name):
                continue
            path = self.tmp_dir / name
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    path.unlink()
                except OSError:
                    pass

    def clear(self) -> None:
        """Delete every entry and record, and the compilers' binary caches (entries being written are left to
        their writers)."""
        from tilelang.cache.usage import binary_cache_dirs

        for path in [self.root / "kernels", self.root / "records", *binary_cache_dirs(self.root)]:
            if path.exists():
                trash = self._new_tmp(f"clear-{path.name}")
                try:
                    os.rename(path, trash)
                except OSError:
                    continue
                shutil.rmtree(trash, ignore_errors=True)
        self.collect_garbage()
