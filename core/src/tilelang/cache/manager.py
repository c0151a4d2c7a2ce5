"""The kernel cache: compiled kernels in memory and compiled artifacts on disk (`DiskStore`).

Memory holds `JITKernel` objects by (program key, out_idx, execution backend); disk holds `CompiledArtifact`s
by program key (``artifact.json`` + the artifact's files), so one entry serves every out_idx and runner.
Records map source keys to program keys (`tilelang.cache.keys`) and keep autotuning results.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from tilelang import env
from tilelang.artifact import CompiledArtifact
from tilelang.cache.store import DiskStore, StoredFiles

__all__ = ["KernelCache", "kernel_cache", "ARTIFACT_JSON"]

ARTIFACT_JSON = "artifact.json"
logger = logging.getLogger("tilelang.cache")


class KernelCache:
    """Process-wide cache state; `enabled` combines `disable`/`enable` with ``TILELANG_DISABLE_CACHE``."""

    def __init__(self) -> None:
        self._memory: dict[Any, Any] = {}
        self._lock = threading.RLock()

    # ------------------------------------------------------------------------------------------ switches
    @property
    def enabled(self) -> bool:
        return env.is_cache_enabled()

    def disable(self) -> None:
        env.disable_cache()

    def enable(self) -> None:
        env.enable_cache()

    def store(self) -> DiskStore:
        """The disk store at the current ``TILELANG_CACHE_DIR``."""
        return DiskStore(env.cache_dir())

    def clear(self, *, disk: bool = True) -> None:
        """Forget every kernel in memory and (with `disk`) delete every entry on disk."""
        with self._lock:
            self._memory.clear()
        if disk:
            self.store().clear()

    # ------------------------------------------------------------------------------------------ memory
    def get_kernel(self, key: Any) -> Any:
        if not self.enabled:
            return None
        return self._memory.get(key)

    def put_kernel(self, key: Any, kernel: Any) -> None:
        if self.enabled:
            with self._lock:
                self._memory[key] = kernel

    # ------------------------------------------------------------------------------------------ disk
    def load_artifact(self, key: str) -> CompiledArtifact | None:
        """The artifact stored under program key `key` (files verified), or None."""
        if not self.enabled:
            return None
        store = self.store()
        files = store.get(key)
        if files is None or ARTIFACT_JSON not in files:
            return None
        try:
            data = json.loads(files[ARTIFACT_JSON])
            rest = StoredFiles({k: v for k, v in files.items() if k != ARTIFACT_JSON},
                               {k: v for k, v in files.paths.items() if k != ARTIFACT_JSON})
            artifact = CompiledArtifact.from_json(data, rest)
        except (ValueError, KeyError, TypeError) as exc:
            logger.warning("discarding unreadable cache entry %s: %r", key, exc)
            store._discard(store.entry_dir(key))
            return None
        return artifact

    def save_artifact(self, key: str, artifact: CompiledArtifact, backend: Any = None) -> bool:
        """Store `artifact` under `key` with the files its execution backend's ``export_files`` names.

        Returns False (after logging why) when the artifact cannot be stored; the kernel still works.
        """
        if not self.enabled:
            return False
        files = dict(artifact.files)
        if backend is not None:
            try:
                files = dict(backend.export_files(artifact))
            except Exception as exc:  # an export problem must not fail a compile that worked
                logger.warning("kernel %s was not cached: exporting it failed: %r", artifact.name, exc)
                return False
        if not files:
            logger.info("kernel %s was not cached: it has no files to store", artifact.name)
            return False
        data = artifact.to_json()
        data["files"] = sorted(files)
        files[ARTIFACT_JSON] = json.dumps(data, sort_keys=True, default=str).encode()
        try:
            kind = artifact.target.get("kind") if isinstance(artifact.target, dict) else None
            self.store().put(key, files, meta={"target": kind, "name": artifact.name})
        except OSError as exc:
            logger.warning("kernel %s was not cached: %r", artifact.name, exc)
            return False
        return True

    # ------------------------------------------------------------------------------------------ records
    def get_record(self, namespace: str, key: str) -> Any:
        return self.store().get_record(namespace, key) if self.enabled else None

    def put_record(self, namespace: str, key: str, value: Any) -> None:
        if self.enabled:
            try:
                self.store().put_record(namespace, key, value)
            except OSError as exc:
                logger.warning("could not write cache record %s/%s: %r", namespace, key, exc)


kernel_cache = KernelCache()
