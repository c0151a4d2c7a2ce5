"""Whether NVIDIA's CuTe DSL (``nvidia-cutlass-dsl``) can be used here, checked without importing it.

`check_cutedsl_available` raises an ImportError naming the pip requirement when the distribution is older than
the supported minimum, is a version known to be broken, or ``cutlass`` with its ``cute`` package is not
importable. Importing ``cutlass.cute`` itself is slow, so only the package layout is inspected.
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from importlib.util import find_spec

__all__ = ["check_cutedsl_available", "cutedsl_requirement"]

_DIST = "nvidia-cutlass-dsl"
_MIN_VERSION = (4, 7, 0)
_BROKEN_VERSIONS = {(4, 3, 4)}
_TRIPLE = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _parse_version_triple(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` from a version string, None when it has no such triple."""
    match = _TRIPLE.search(version)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def cutedsl_requirement() -> str:
    """The pip requirement of a supported CuTe DSL, e.g. ``nvidia-cutlass-dsl>=4.7.0,!=4.3.4``."""
    spec = f"{_DIST}>={'.'.join(map(str, _MIN_VERSION))}"
    for broken in sorted(_BROKEN_VERSIONS):
        spec += f",!={'.'.join(map(str, broken))}"
    return spec


def _installed_version() -> str | None:
    try:
        return metadata.version(_DIST)
    except metadata.PackageNotFoundError:
        return None
    except Exception:  # unusual metadata must not block a working install
        return None


def _has_cute_package() -> bool:
    spec = find_spec("cutlass")
    if spec is None:
        return False
    for base in spec.submodule_search_locations or []:
        if os.path.isdir(os.path.join(base, "cute")) or os.path.isfile(os.path.join(base, "cute.py")):
            return True
    return False


def check_cutedsl_available() -> None:
    """Raise ImportError (with the ``pip install`` to run) unless a supported CuTe DSL is installed."""
    req = cutedsl_requirement()
    version = _installed_version()
    if version is not None:
        parsed = _parse_version_triple(version)
        if parsed is None or parsed < _MIN_VERSION:
            raise ImportError(f"CuTeDSL backend requires `{req}`, but found version `{version}`. Please run: "
                              f"`pip install -U '{req}'`.")
        if parsed in _BROKEN_VERSIONS:
            raise ImportError(f"CuTeDSL version `{version}` is known to have compatibility issues and is not "
                              f"supported. Please run: `pip install -U '{req}'`.")
    if not _has_cute_package():
        raise ImportError("CuTeDSL backend requires the CUTLASS Python DSL with CuTe support (install via "
                          f"`pip install -U '{req}'`).")
