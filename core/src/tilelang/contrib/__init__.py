"""Toolchain helpers of the reference TileLang. Core carries the host C/C++ ones (`cc`, `msvc`); the vendor
toolchains are their backends' code, reached under the reference's paths through module aliases:
``nvcc``, ``nvrtc`` and ``cutedsl`` come with tilelang-cuda, ``hipcc``, ``rocm`` and ``hip_resource_info``
with tilelang-rocm (without it, importing one says what to install).

``compile_cuda`` / ``compile_hip`` are resolved lazily from ``tilelang.contrib.nvcc`` and ``tilelang.contrib.hipcc``.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"compile_cuda": "tilelang.contrib.nvcc", "compile_hip": "tilelang.contrib.hipcc"}

__all__ = ["compile_cuda", "compile_hip"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang.contrib' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
