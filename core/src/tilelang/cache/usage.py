"""What the disk cache holds, its size limit and LRU eviction (``TILELANG_CACHE_MAX_BYTES``, ``tilelang cache``).

The limit counts the evictable items: kernel entries (``kernels/<k[:2]>/<k>/``, one item each) and compilers'
binary caches (``<version>/<compiler>-binaries/<file>``, one item per file). Small JSON records and temporaries
are not counted. An item's last use is its modification time (a kernel entry's manifest, a binary's file), set
when it is written and again on every hit, so several processes, and several hosts sharing the directory, agree
on the order without a lock (hosts' clocks are assumed roughly in step).

When a write takes the total over the limit, `enforce_limit` removes the least recently used items, never the
one just written, until the total fits. Removing an entry is one ``rename`` out of ``kernels/`` (then deleting
it), so a process reading it at that moment sees a whole entry or a miss; two processes evicting at once each
skip what the other has already removed.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilelang.cache.atomic import host_tag, parse_temporary_name, pid_alive

if TYPE_CHECKING:
    from tilelang.cache.store import DiskStore

__all__ = ["CacheItem", "binary_cache_dirs", "cache_items", "target_of", "remove_item", "enforce_limit",
           "summary", "iter_selected", "record_stats"]

logger = logging.getLogger("tilelang.cache")
_MANIFEST = "manifest.json"
_ARTIFACT = "artifact.json"


@dataclass(frozen=True)
class CacheItem:
    """One evictable thing: a kernel entry (`kind` ``"kernel"``) or a compiler binary (``"binary"``)."""

    kind: str
    key: str
    path: Path
    size: int
    last_used_ns: int

    @property
    def age_seconds(self) -> float:
        """Seconds since its last use."""
        return max(0.0, (time.time_ns() - self.last_used_ns) / 1e9)


def _scandir(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


def binary_cache_dirs(root: Path) -> list[Path]:
    """The compilers' binary caches under `root` (``<version>/<compiler>-binaries``)."""
    found = []
    for version in _scandir(root):
        if version.is_dir() and version.name not in ("kernels", "records", "tmp"):
            found += [Path(d.path) for d in _scandir(Path(version.path))
                      if d.is_dir() and d.name.endswith("-binaries")]
    return sorted(found)


def _kernel_item(entry: os.DirEntry[str]) -> CacheItem | None:
    size = 0
    last_used = None
    for f in _scandir(Path(entry.path)):
        try:
            st = f.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        size += st.st_size
        if f.name == _MANIFEST:
            last_used = st.st_mtime_ns
    if last_used is None:  # no manifest: damaged or vanishing; the first to go
        if not os.path.isdir(entry.path):
            return None
        last_used = 0
    return CacheItem("kernel", entry.name, Path(entry.path), size, last_used)


def cache_items(store: DiskStore) -> list[CacheItem]:
    """Every kernel entry and compiler binary in `store`, in no particular order (vanished ones skipped)."""
    items = []
    for shard in _scandir(store.root / "kernels"):
        for entry in _scandir(Path(shard.path)):
            item = _kernel_item(entry)
            if item is not None:
                items.append(item)
    for directory in binary_cache_dirs(store.root):
        for f in _scandir(directory):
            if f.name.startswith(".") or f.name.endswith(".tmp") or parse_temporary_name(f.name):
                continue  # a write in progress
            try:
                st = f.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            items.append(CacheItem("binary", f.name, Path(f.path), st.st_size, st.st_mtime_ns))
    return items


def target_of(item: CacheItem) -> str:
    """The target kind an item was built for (``"unknown"`` when its files do not say)."""
    if item.kind == "binary":
        return item.path.parent.name.removesuffix("-binaries")
    try:
        manifest = json.loads((item.path / _MANIFEST).read_bytes())
        kind = (manifest.get("meta") or {}).get("target")
        if kind is None:  # written before manifests carried it
            target = json.loads((item.path / _ARTIFACT).read_bytes()).get("target")
            kind = target.get("kind") if isinstance(target, dict) else target
    except (OSError, ValueError, AttributeError):
        return "unknown"
    return str(kind) if kind else "unknown"


def remove_item(store: DiskStore, item: CacheItem) -> bool:
    """Remove `item` (an entry by one rename, then deletion); False when another process removed it first."""
    if item.kind == "binary":
        try:
            item.path.unlink()
        except FileNotFoundError:
            return False
        return True
    trash = store._new_tmp("evict")
    try:
        os.rename(item.path, trash)
    except FileNotFoundError:
        return False
    except OSError:
        return False  # replaced or being replaced by a writer: leave it to them
    shutil.rmtree(trash, ignore_errors=True)
    return True


def enforce_limit(store: DiskStore, limit: int, keep: Path | None = None) -> list[CacheItem]:
    """Evict least recently used items until the total is at most `limit` bytes; never `keep` (the item just
    written, which stays even when it alone exceeds the limit). Returns what was evicted."""
    items = cache_items(store)
    total = sum(item.size for item in items)
    evicted: list[CacheItem] = []
    if total <= limit:
        return evicted
    for item in sorted(items, key=lambda i: (i.last_used_ns, i.key)):
        if keep is not None and item.path == Path(keep):
            continue
        remove_item(store, item)  # gone either way: by us, or by another process evicting at the same time
        total -= item.size
        evicted.append(item)
        if total <= limit:
            break
    if evicted:
        logger.info("kernel cache over its limit of %d bytes: evicted %d least recently used item(s)", limit,
                    len(evicted))
    return evicted


def _temporaries(store: DiskStore) -> dict[str, int]:
    counts = {"this host, writing": 0, "this host, stale": 0, "other hosts": 0, "unrecognised": 0}
    me = host_tag()
    for f in _scandir(store.tmp_dir):
        parsed = parse_temporary_name(f.name)
        if parsed is None:
            counts["unrecognised"] += 1
        elif parsed[0] != me:
            counts["other hosts"] += 1
        elif parsed[1] == os.getpid() or pid_alive(parsed[1]):
            counts["this host, writing"] += 1
        else:
            counts["this host, stale"] += 1
    return counts


def record_stats(store: DiskStore) -> tuple[int, int]:
    """``(count, bytes)`` of the JSON records in `store`."""
    count = size = 0
    for namespace in _scandir(store.root / "records"):
        for f in _scandir(Path(namespace.path)):
            try:
                size += f.stat(follow_symlinks=False).st_size
                count += 1
            except FileNotFoundError:
                continue
    return count, size


def summary(store: DiskStore, limit: int | None, items: Iterable[CacheItem] | None = None) -> dict[str, Any]:
    """What ``tilelang cache info`` prints: counts, bytes and the limit of `store`, per target kind too."""
    items = list(cache_items(store) if items is None else items)
    kernels = [i for i in items if i.kind == "kernel"]
    binaries = [i for i in items if i.kind == "binary"]
    records, records_bytes = record_stats(store)
    return {
        "directory": str(store.root),
        "entries": len(kernels),
        "entries_bytes": sum(i.size for i in kernels),
        "binaries": len(binaries),
        "binaries_bytes": sum(i.size for i in binaries),
        "total_bytes": sum(i.size for i in items),
        "limit_bytes": limit,
        "per_target": dict(sorted(Counter(target_of(i) for i in kernels).items())),
        "records": records,
        "records_bytes": records_bytes,
        "temporaries": _temporaries(store),
        "host": host_tag(),
    }


def iter_selected(items: Iterable[CacheItem], target: str | None = None,
                  older_than: float | None = None) -> Iterator[CacheItem]:
    """`items` built for `target` (a kind) and unused for more than `older_than` seconds, where given."""
    for item in items:
        if older_than is not None and item.age_seconds <= older_than:
            continue
        if target is not None and target_of(item) != target:
            continue
        yield item
