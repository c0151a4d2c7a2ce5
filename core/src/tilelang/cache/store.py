"""The on-disk store: crash-safe, concurrent-safe directories of files, plus small JSON records.

Layout under the cache root::

    kernels/<key[:2]>/<key>/   one entry: its files and ``manifest.json`` (sha256 + size of every file)
    records/<ns>/<key>.json    small JSON records (source key -> program key, autotuning results)
    tmp/                       entries being written: ``<name>.<pid>.<random>``

An entry is written in a fresh directory under ``tmp/`` (manifest last) and published with one ``rename``:
readers see a whole entry or none, and a process killed mid-write leaves only its ``tmp/`` directory, which
the next writer removes once its pid is gone. When two processes publish the same key, the second rename fails
and the loser discards its copy. Reads check every file against the manifest: a damaged entry is moved aside,
deleted and reported as a miss, so it is rebuilt.
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


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
        path = self.tmp_dir / f"{name[:24]}.{os.getpid()}.{os.urandom(6).hex()}"
        return path

    # ------------------------------------------------------------------------------------------ entries
    def get(self, key: str) -> StoredFiles | None:
        """The files of entry `key`, verified against its manifest; None when absent or damaged."""
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
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self._discard(entry)
            return None
        return StoredFiles(data, paths)

    def put(self, key: str, files: dict[str, bytes]) -> bool:
        """Publish entry `key` atomically; False when another process published it first."""
        self.collect_garbage()
        tmp = self._new_tmp(key)
        tmp.mkdir()
        try:
            delay = env.cache_write_delay()
            manifest: dict[str, Any] = {"format": _FORMAT, "key": key, "created": time.time(), "files": {}}
            for name, blob in files.items():
                if "/" in name or name in (MANIFEST, "", ".", ".."):
                    raise ValueError(f"invalid cache file name {name!r}")
                _write_file(tmp / name, blob)
                manifest["files"][name] = {"sha256": _sha256(blob), "size": len(blob)}
                if delay:
                    time.sleep(delay)
            _write_file(tmp / MANIFEST, json.dumps(manifest, sort_keys=True).encode())
            final = self.entry_dir(key)
            final.parent.mkdir(parents=True, exist_ok=True)
            for _ in range(3):
                try:
                    os.rename(tmp, final)
                    return True
                except OSError as exc:
                    if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
                if self.get(key) is not None:  # someone else published a good entry
                    return False
                # a damaged entry was discarded by get(); try again
            return False
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)

    def _discard(self, entry: Path) -> None:
        """Move a damaged entry aside (one rename, so readers never see half of it) and delete it."""
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
        """Write a JSON record atomically (temp file + ``os.replace``)."""
        path = self.record_path(namespace, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._new_tmp(key)
        try:
            _write_file(tmp, json.dumps(value, sort_keys=True).encode())
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()

    # ------------------------------------------------------------------------------------------ upkeep
    def collect_garbage(self) -> None:
        """Remove temp entries whose writer process is gone (killed mid-write)."""
        try:
            names = os.listdir(self.tmp_dir)
        except FileNotFoundError:
            return
        for name in names:
            parts = name.rsplit(".", 2)
            if len(parts) != 3 or not parts[1].isdigit():
                continue
            pid = int(parts[1])
            if pid != os.getpid() and not _pid_alive(pid):
                path = self.tmp_dir / name
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        path.unlink()
                    except OSError:
                        pass

    def clear(self) -> None:
        """Delete every entry and record (entries being written by live processes are left to them)."""
        for sub in ("kernels", "records"):
            path = self.root / sub
            if path.exists():
                trash = self._new_tmp(f"clear-{sub}")
                try:
                    os.rename(path, trash)
                except OSError:
                    continue
                shutil.rmtree(trash, ignore_errors=True)
        self.collect_garbage()
