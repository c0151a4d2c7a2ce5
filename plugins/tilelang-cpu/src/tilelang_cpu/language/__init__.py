"""The CPU dialect of the TileLang language (``tilelang.cpu.language``): exactly the common language.

The CPU backend adds no constructs of its own, so its dialect is ``tilelang.language.common`` under the name
``cpu``; names are resolved on first use (``import tilelang.cpu.language`` imports neither TVM nor torch).
"""

from __future__ import annotations

import importlib
from typing import Any

__tilelang_dialect__ = "cpu"


def __getattr__(name: str) -> Any:
    common = importlib.import_module("tilelang.language.common")
    if name == "__all__":
        value = tuple(common.__all__)
    elif name in common.__all__:
        value = getattr(common, name)
    else:
        raise AttributeError(f"module 'tilelang.cpu.language' has no attribute {name!r} (the CPU dialect is the "
                             "common language: see tilelang.language.common.__all__)")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
