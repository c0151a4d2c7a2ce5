"""A snapshot of the installed environment (backend entry points and versions), cached on disk.

Scanning installed distributions for ``tilelang.backends`` entry points and reading versions costs ~6-10 ms
through ``importlib.metadata``: more than a whole cache hit may take. The snapshot is keyed by the
interpreter, ``sys.path`` and the modification time of every ``sys.path`` directory (installing or removing
a distribution adds or removes a ``*.dist-info`` entry there, which changes that time), so it is recomputed
exactly when the environment changes.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

from tilelang.cache.store import DiskStore

__all__ = ["snapshot", "prime_plugin_discovery"]

_NAMESPACE = "environment"
_DISTRIBUTIONS = ("apache-tvm", "apache-tvm-ffi")


def _state_key() -> str:
    from tilelang.cache.keys import digest

    stamps = []
    for entry in sys.path:
        try:
            stamps.append(os.stat(entry or ".").st_mtime_ns)
        except OSError:
            stamps.append(None)
    return digest(sys.executable, sys.version, list(sys.path), stamps)


def _scan() -> dict[str, Any]:
    from importlib import metadata

    from tilelang.backend import plugins

    found = {}
    for dist in _DISTRIBUTIONS:
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            found[dist] = "absent"
    eps = plugins.read_entry_points()
    return {"versions": found, "entry_points": [[e.kind, e.value, e.distribution, e.version] for e in eps]}


@functools.cache
def snapshot() -> dict[str, Any]:
    """``{"versions": {dist: version}, "entry_points": [[kind, value, distribution, version], ...]}``."""
    from tilelang.cache.manager import kernel_cache

    if not kernel_cache.enabled:
        return _scan()
    key = _state_key()
    store = DiskStore()
    found = store.get_record(_NAMESPACE, key)
    if isinstance(found, dict) and "versions" in found and "entry_points" in found:
        return found
    found = _scan()
    try:
        store.put_record(_NAMESPACE, key, found)
    except OSError:
        pass
    return found


def prime_plugin_discovery() -> None:
    """Give the plugin loader the snapshot's entry points, so it does not scan distributions again."""
    from tilelang.backend import plugins

    plugins.prime_entry_points([plugins.EntryPointInfo(*e) for e in snapshot()["entry_points"]])
