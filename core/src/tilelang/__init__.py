"""TileLang: a tile-level Python DSL for high-performance kernels, with pluggable backends.

``import tilelang`` is cheap: it imports neither TVM, torch nor any backend plugin. Everything below is
resolved on first attribute access (PEP 562), and ``tilelang.<backend>`` (e.g. ``tilelang.cpu``) resolves to
the installed plugin package ``tilelang_<backend>`` through an import hook fed by entry-point metadata.
"""

from __future__ import annotations

import importlib
from typing import Any

from tilelang._version import __version__
from tilelang.backend import _alias

_alias.install()

# public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "tvm": ("tvm", None),
    "language": ("tilelang.language", None),
    "backend": ("tilelang.backend", None),
    "errors": ("tilelang.errors", None),
    "env": ("tilelang.env", None),
    "lower": ("tilelang.engine", "lower"),
    "jit": ("tilelang.jit", None),  # the module is callable: `tilelang.jit(...)` is `tilelang.jit.jit(...)`
    "compile": ("tilelang.jit", "compile"),
    "par_compile": ("tilelang.jit", "par_compile"),
    "JITKernel": ("tilelang.jit", "JITKernel"),
    "autotune": ("tilelang.autotuner", "autotune"),
    "AutoTuner": ("tilelang.autotuner", "AutoTuner"),
    "Profiler": ("tilelang.profiler", "Profiler"),
    "cached": ("tilelang.cache", "cached"),
    "disable_cache": ("tilelang.cache", "disable_cache"),
    "enable_cache": ("tilelang.cache", "enable_cache"),
    "clear_cache": ("tilelang.cache", "clear_cache"),
    "is_cache_enabled": ("tilelang.cache", "is_cache_enabled"),
    "determine_target": ("tilelang.backend.target", "determine_target"),
    "PassConfigKey": ("tilelang.transform.config", "PassConfigKey"),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        if not name.startswith("_") and _alias.is_backend_alias(name):  # tilelang.cuda -> tilelang_cuda
            return importlib.import_module(f"tilelang.{name}")
        raise AttributeError(f"module 'tilelang' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["__version__", *_LAZY]
