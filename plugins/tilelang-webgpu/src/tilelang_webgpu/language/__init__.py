"""The WebGPU dialect of the TileLang language (``tilelang.webgpu.language``): exactly the common language.

The WebGPU backend adds no constructs of its own, so its dialect is ``tilelang.language.common`` under the name
``webgpu``; names are resolved on first use (``import tilelang.webgpu.language`` imports neither TVM nor torch).
"""

from __future__ import annotations

import importlib
from typing import Any

__tilelang_dialect__ = "webgpu"


def __getattr__(name: str) -> Any:
    common = importlib.import_module("tilelang.language.common")
    if name == "__all__":
        value = tuple(common.__all__)
    elif name in common.__all__:
        value = getattr(common, name)
    else:
        raise AttributeError(f"module 'tilelang.webgpu.language' has no attribute {name!r} (the WebGPU dialect is the "
                             "common language: see tilelang.language.common.__all__)")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
