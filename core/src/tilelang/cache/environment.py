"""A snapshot of the installed environment (backend entry points and versions), cached on disk.

Scanning installed distributions for ``tilelang.backends`` entry points and reading versions costs ~6-10 ms
through ``importlib.metadata``: more than a whole cache hit may take. The snapshot is stored under the
interpreter and ``sys.path``, and remembers the ``sys.path`` directories that hold distributions (``*.dist-info``,
``*.egg-info``, ``*.egg-link``, ``*.pth``) with their modification times: installing or removing a distribution
adds or removes such an entry there, which changes that time, so the snapshot is recomputed exactly then.
Directories without distributions (a script's own folder, where it may write files) are not watched.
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
_DIST_MARKERS = (".dist-info", ".egg-info", ".egg-link", ".pth")


def _state_key() -> str:
    from tilelang.cache.keys import digest

    return digest(sys.executable, sys.version, list(sys.path))


def _mtime(entry: str) -> int | None:
    try:
        return os.stat(entry or ".").st_mtime_ns
    except OSError:
        return None


def _holds_distributions(entry: str) -> bool:
    try:
        return any(name.endswith(_DIST_MARKERS) for name in os.listdir(entry or "."))
    except OSError:
        return False


def _watched() -> dict[str, int | None]:
    """The ``sys.path`` directories holding distributions, with their modification times."""
    return {entry: _mtime(entry) for entry in dict.fromkeys(sys.path) if _holds_distributions(entry)}


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
    if isinstance(found, dict) and "versions" in found and "entry_points" in found and \
            isinstance(found.get("watched"), dict) and \
            all(_mtime(entry) == stamp for entry, stamp in found["watched"].items()):
        return found
    watched = _watched()  # before the scan: a change during it makes the next process scan again
    found = {**_scan(), "watched": watched}
    try:
        store.put_record(_NAMESPACE, key, found)
    except OSError:
        pass
    return found


def prime_plugin_discovery() -> None:
    """Give the plugin loader the snapshot's entry points, so it does not scan distributions again."""
    from tilelang.backend import plugins

    plugins.prime_entry_points([plugins.EntryPointInfo(*e) for e in snapshot()["entry_points"]])
