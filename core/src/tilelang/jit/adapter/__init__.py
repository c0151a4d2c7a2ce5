"""Execution adapters of the reference TileLang (``JITKernel.adapter``), presenting this project's execution
backends under the reference's interface: `BaseKernelAdapter`, `TVMFFIKernelAdapter`, `CythonKernelAdapter`,
`MetalKernelAdapter`, and (in subpackages) the NVRTC and CuTeDSL adapters. Imported lazily."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "BaseKernelAdapter": "tilelang.jit.adapter.base",
    "CachedTextSource": "tilelang.jit.adapter.base",
    "TVMFFIKernelAdapter": "tilelang.jit.adapter.tvm_ffi",
    "CythonKernelAdapter": "tilelang.jit.adapter.cython.adapter",
    "MetalKernelAdapter": "tilelang.jit.adapter.torch.metal",
    "NVRTCKernelAdapter": "tilelang.jit.adapter.nvrtc.adapter",
    "CuTeDSLKernelAdapter": "tilelang.jit.adapter.cutedsl.adapter",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang.jit.adapter' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = list(_LAZY)
