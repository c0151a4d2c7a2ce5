"""Refuse to import next to the reference TileLang.

PyPI's ``tilelang`` (the reference, 0.1.x) and ``tilelang-core`` both install the Python package ``tilelang``: in
one environment the second install overwrites the first one's files and leaves a mix of both. `check` (run by
``import tilelang``) raises `ReferenceTileLangInstalled` when it finds the reference, by two cheap signs:

- files only the reference ships inside this package's directory (``3rdparty/``, ``libinfo.py``,
  ``lib/libtilelang.so``);
- a ``tilelang-<version>.dist-info`` on ``sys.path`` that is not this project's (this project's meta-distribution
  is ``tilelang-suite``; an older one named ``tilelang`` required ``tilelang-core``).

It lists directories and reads no metadata unless a ``tilelang-*.dist-info`` is there (importlib.metadata would
cost ~0.15 s per import).
"""

from __future__ import annotations

import os
import re
import sys

from tilelang.errors import TileLangError

__all__ = ["ReferenceTileLangInstalled", "check", "find_reference"]

_REFERENCE_FILES = ("3rdparty", "libinfo.py", os.path.join("lib", "libtilelang.so"))
_DIST_INFO = re.compile(r"^tilelang-(\d[\w.+!]*)\.dist-info$", re.IGNORECASE)


class ReferenceTileLangInstalled(TileLangError, ImportError):
    """The reference TileLang and tilelang-core are installed in the same environment."""


def _ours(dist_info: str) -> bool:
    """Whether a ``tilelang-*.dist-info`` is this project's former meta-distribution (it required tilelang-core)."""
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8", errors="replace") as f:
            return any(line.lower().startswith("requires-dist: tilelang-core") for line in f)
    except OSError:
        return False


def find_reference(package_dir: str | None = None, path: list[str] | None = None) -> str | None:
    """Where the reference TileLang shows itself (a file in `package_dir`, or its dist-info on `path`), or None."""
    package_dir = package_dir or os.path.dirname(os.path.abspath(__file__))
    for name in _REFERENCE_FILES:
        if os.path.exists(os.path.join(package_dir, name)):
            return os.path.join(package_dir, name)
    for entry in sys.path if path is None else path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if _DIST_INFO.match(name) and not _ours(os.path.join(entry, name)):
                return os.path.join(entry, name)
    return None


def check() -> None:
    """Raise `ReferenceTileLangInstalled` when the reference TileLang is installed beside this core."""
    found = find_reference()
    if found is not None:
        raise ReferenceTileLangInstalled(
            f"the reference TileLang (PyPI `tilelang`, found at {found}) is installed in the same environment as "
            "tilelang-core. Both install the Python package `tilelang`, so one overwrote the other's files. Keep "
            "one of them: `pip uninstall -y tilelang tilelang-core`, then reinstall tilelang-core and its backends "
            "(or the reference alone).")
