"""The reference TileLang's CuTeDSL execution adapter: `CuTeDSLKernelAdapter` (runs a generated CuTe DSL Python
module), `TLCuTeDSLSourceWrapper`, `CuTeDSLLibraryGenerator` and `check_cutedsl_available`.

This project does not generate CuTe DSL kernels (see `tilelang_cuda.contrib.cutedsl`), so a fresh adapter cannot be
built here; adapters restored from a cache (`CuTeDSLKernelAdapter.from_database`) keep and show their sources.
Only `checks` is imported eagerly; the rest loads on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from tilelang_cuda.adapters.cutedsl.checks import check_cutedsl_available

__all__ = ["CuTeDSLKernelAdapter", "TLCuTeDSLSourceWrapper", "CuTeDSLLibraryGenerator", "check_cutedsl_available"]

_LAZY = {
    "CuTeDSLKernelAdapter": "tilelang_cuda.adapters.cutedsl.adapter",
    "TLCuTeDSLSourceWrapper": "tilelang_cuda.adapters.cutedsl.wrapper",
    "CuTeDSLLibraryGenerator": "tilelang_cuda.adapters.cutedsl.libgen",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang_cuda.adapters.cutedsl' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
