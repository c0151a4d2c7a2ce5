"""Version helpers."""

from __future__ import annotations

import re

__all__ = ["build_date"]


def build_date(version_str: str | None = None) -> int | None:
    """The build date (YYYYMMDD) in a version string such as ``0.1.7.post3+cuda.d20260127.gita17230e4``
    (default: ``tilelang.__version__``), or None when it carries none."""
    if version_str is None:
        from tilelang._version import __version__ as version_str
    match = re.search(r"\.d(\d{8})\.", version_str)
    return int(match.group(1)) if match else None
