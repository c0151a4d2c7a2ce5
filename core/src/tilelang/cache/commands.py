"""``tilelang cache info`` and ``tilelang cache clear``: inspect and empty the disk kernel cache.

``info`` prints the directory, the number of entries, their bytes, the limit (``TILELANG_CACHE_MAX_BYTES``),
entries per target kind, records and temporaries (``--json`` for a machine-readable form).

``clear`` deletes entries. With no filter it empties the whole cache (entries, compilers' binaries and
records); ``--target KIND`` keeps what was built for other target kinds, ``--older-than AGE`` (``30d``, ``12h``,
``90m``, ``45s``, ``2w`` or seconds) keeps what was used more recently. It asks before deleting when run from
a terminal; elsewhere (scripts, CI) it refuses unless ``--yes`` is given, so nothing is deleted by accident.
``--dry-run`` lists what would go. Entries being written by other processes are left to them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

__all__ = ["add_cache_command", "parse_duration", "format_bytes"]

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> float:
    """``30d`` / ``12h`` / ``90m`` / ``45s`` / ``2w`` / a number of seconds, as seconds (ValueError otherwise)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhdw]?)\s*", str(text).lower())
    if match is None:
        raise ValueError(f"{text!r} is not a duration: use e.g. 30d, 12h, 90m, 45s or a number of seconds")
    number, unit = match.groups()
    return float(number) * _DURATION_UNITS[unit or "s"]


def format_bytes(n: int | None) -> str:
    """``1.5 GiB``-style text for a byte count (``none`` for None)."""
    if n is None:
        return "none"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _duration_arg(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _limit() -> tuple[int | None, str | None]:
    from tilelang.env import env

    try:
        return env.cache_max_bytes(), None
    except ValueError as exc:
        return None, str(exc)


def _info(ns: argparse.Namespace) -> int:
    from tilelang.cache.store import DiskStore
    from tilelang.cache.usage import summary
    from tilelang.env import env

    limit, problem = _limit()
    report = summary(DiskStore(env.cache_dir()), limit)
    report["enabled"] = env.is_cache_enabled()
    if problem:
        report["limit_error"] = problem
    if ns.json:
        json.dump(report, sys.stdout, indent=2)
        print()
        return 0
    print(f"directory:   {report['directory']}{'' if report['enabled'] else '  (caching disabled)'}")
    print(f"entries:     {report['entries']}  ({format_bytes(report['entries_bytes'])})")
    if report["binaries"]:
        print(f"binaries:    {report['binaries']}  ({format_bytes(report['binaries_bytes'])})")
    limit_text = format_bytes(limit) if limit is not None else "none (set TILELANG_CACHE_MAX_BYTES, e.g. 10G)"
    print(f"total:       {format_bytes(report['total_bytes'])}  ({report['total_bytes']} bytes)")
    print(f"limit:       {limit_text}" + (f"  [invalid: {problem}]" if problem else ""))
    if report["per_target"]:
        print("per target:  " + ", ".join(f"{k} {v}" for k, v in report["per_target"].items()))
    print(f"records:     {report['records']}  ({format_bytes(report['records_bytes'])})")
    temps = {k: v for k, v in report["temporaries"].items() if v}
    if temps:
        print("temporaries: " + ", ".join(f"{v} {k}" for k, v in temps.items()))
    return 0


def _confirm(question: str) -> bool:
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def _clear(ns: argparse.Namespace) -> int:
    from tilelang.cache.store import DiskStore
    from tilelang.cache.usage import cache_items, iter_selected, record_stats, remove_item
    from tilelang.env import env

    store = DiskStore(env.cache_dir())
    items = cache_items(store)
    filtered = ns.target is not None or ns.older_than is not None
    chosen = list(iter_selected(items, ns.target, ns.older_than)) if filtered else items
    size = sum(i.size for i in chosen)
    what = f"{len(chosen)} item(s), {format_bytes(size)}"
    if not filtered:
        records = record_stats(store)[0]
        what += f", and {records} record(s)"
    if ns.dry_run:
        for item in sorted(chosen, key=lambda i: i.last_used_ns):
            print(f"would remove {item.kind} {item.key}  {format_bytes(item.size)}  "
                  f"unused for {item.age_seconds / 3600:.1f} h")
        print(f"would remove {what} from {store.root}")
        return 0
    if not chosen and filtered:
        print(f"nothing to remove in {store.root}")
        return 0
    if not ns.yes:
        if not sys.stdin.isatty():
            print(f"tilelang cache clear: would delete {what} from {store.root}; pass --yes to confirm "
                  "(or --dry-run to list them)", file=sys.stderr)
            return 1
        if not _confirm(f"Delete {what} from {store.root}?"):
            print("nothing deleted")
            return 1
    if filtered:
        removed = [item for item in chosen if remove_item(store, item)]
        print(f"removed {len(removed)} item(s), {format_bytes(sum(i.size for i in removed))} from {store.root}")
    else:
        store.clear()
        print(f"removed {what} from {store.root}")
    return 0


def _cache(ns: argparse.Namespace) -> int:
    handler = {"info": _info, "clear": _clear}.get(ns.cache_command)
    if handler is None:
        ns.cache_parser.print_help()
        return 2
    return handler(ns)


def add_cache_command(sub: Any) -> dict[str, Any]:
    """Add ``cache`` (``info``, ``clear``) to argparse subparsers `sub`; returns ``{"cache": handler}``."""
    p = sub.add_parser("cache", help="inspect or empty the on-disk kernel cache (TILELANG_CACHE_DIR)",
                       description="Inspect (info) or empty (clear) the on-disk kernel cache.")
    p.set_defaults(cache_parser=p)
    actions = p.add_subparsers(dest="cache_command")
    info = actions.add_parser("info", help="directory, entries, bytes, limit, entries per target")
    info.add_argument("--json", action="store_true", help="print the report as JSON")
    clear = actions.add_parser("clear", help="delete cache entries (all, or those matching the filters)")
    clear.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    clear.add_argument("--target", default=None, metavar="KIND", help="only entries built for this target kind")
    clear.add_argument("--older-than", type=_duration_arg, default=None, metavar="AGE",
                       help="only entries unused for longer than AGE (30d, 12h, 90m, 45s, or seconds)")
    clear.add_argument("--dry-run", action="store_true", help="list what would be deleted, delete nothing")
    return {"cache": _cache}
