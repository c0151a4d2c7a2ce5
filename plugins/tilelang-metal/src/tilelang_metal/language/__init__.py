"""The Metal dialect of the TileLang language (``tilelang.metal.language``): the common language plus Metal's
simdgroup-matrix operators (`tilelang_metal.language.tir`) and the Metal 4 cooperative-tensor operators
(`tilelang_metal.language.cooperative_tensor`, lowered under a ``metal4`` target).

Common names resolve on first use (``import tilelang.metal.language`` imports neither TVM nor torch).
"""

from __future__ import annotations

import importlib
from typing import Any

from tilelang_metal.language import cooperative_tensor, tir
from tilelang_metal.language.cooperative_tensor import *  # noqa: F403
from tilelang_metal.language.tir import *  # noqa: F403

__tilelang_dialect__ = "metal"
METAL_NAMES: tuple[str, ...] = (*tir.__all__, *cooperative_tensor.__all__)


def __getattr__(name: str) -> Any:
    common = importlib.import_module("tilelang.language.common")
    if name == "__all__":
        value = tuple(dict.fromkeys((*common.__all__, *METAL_NAMES)))
    elif name in common.__all__:
        value = getattr(common, name)
    else:
        raise AttributeError(f"module 'tilelang.metal.language' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
