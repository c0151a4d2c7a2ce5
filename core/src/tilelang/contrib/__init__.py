"""Toolchain helpers of the reference TileLang: C/C++ (`cc`, `msvc`), CUDA (`nvcc`, `nvrtc`), ROCm (`hipcc`,
`rocm`, `hip_resource_info`) and the CuTe DSL device helpers (`cutedsl`).

They live in core so every backend shares one implementation (the CUDA plugin compiles through `nvcc`).
Importing this package is cheap: submodules load on first use, and ``compile_cuda`` / ``compile_hip`` are
resolved lazily from `nvcc` and `hipcc`.
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
