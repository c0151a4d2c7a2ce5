"""TileLang: a tile-level Python DSL for high-performance kernels, with pluggable backends.

``import tilelang`` is cheap: it imports neither TVM, torch nor any backend plugin. Everything below is
resolved on first attribute access (PEP 562): the reference TileLang's top-level names (``jit``, ``compile``,
``lower``, ``Profiler``, ``TensorSupplyType``, ``Layout``, ``PassConfigKey``, ``cdiv``, ...) and every core
subpackage (``tilelang.transform``, ``tilelang.layout``, ...), while ``tilelang.<backend>`` (e.g. ``tilelang.cpu``)
resolves to the installed plugin package ``tilelang_<backend>`` through an import hook fed by entry-point metadata.
``tilelang.env`` is the `tilelang.env.Environment` instance (every environment variable TileLang reads).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from tilelang import _conflict

_conflict.check()  # the reference TileLang's files mixed with ours: say so before anything else fails

from tilelang import _tvm_compat  # noqa: E402
from tilelang._version import __version__  # noqa: E402
from tilelang.backend import _alias  # noqa: E402
from tilelang.env import env  # noqa: E402
from tilelang.log import set_log_level  # noqa: E402

_alias.install()
_tvm_compat.install()

logger = logging.getLogger("tilelang")

# public name -> (module, attribute or None for the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "tvm": ("tvm", None),
    "DataType": ("tvm", "DataType"),
    "lower": ("tilelang.engine", "lower"),
    "register_cuda_postproc": ("tilelang.engine.callback", "register_cuda_postproc"),
    "register_hip_postproc": ("tilelang.engine.callback", "register_hip_postproc"),
    "register_c_postproc": ("tilelang.engine.callback", "register_c_postproc"),
    "register_metal_postproc": ("tilelang.engine.callback", "register_metal_postproc"),
    "jit": ("tilelang.jit", None),  # the module is callable: `tilelang.jit(...)` is `tilelang.jit.jit(...)`
    "compile": ("tilelang.jit", "compile"),
    "par_compile": ("tilelang.jit", "par_compile"),
    "JITKernel": ("tilelang.jit", "JITKernel"),
    "autotune": ("tilelang.autotuner", "autotune"),
    "AutoTuner": ("tilelang.autotuner", "AutoTuner"),
    "Profiler": ("tilelang.profiler", "Profiler"),
    "TensorSupplyType": ("tilelang.profiler.supply", "TensorSupplyType"),
    "cached": ("tilelang.cache", "cached"),
    "disable_cache": ("tilelang.cache", "disable_cache"),
    "enable_cache": ("tilelang.cache", "enable_cache"),
    "clear_cache": ("tilelang.cache", "clear_cache"),
    "is_cache_enabled": ("tilelang.cache", "is_cache_enabled"),
    "determine_target": ("tilelang.backend.target", "determine_target"),
    "PassConfigKey": ("tilelang.transform.config", "PassConfigKey"),
    "Layout": ("tilelang.layout", "Layout"),
    "Fragment": ("tilelang.layout", "Fragment"),
    "dtypes": ("tilelang.language.dtypes", None),
    "cdiv": ("tilelang.math", "cdiv"),
    "next_power_of_2": ("tilelang.math", "next_power_of_2"),
    "deprecated": ("tilelang.utils.deprecated", "deprecated"),
    "build_date": ("tilelang.utils.version", "build_date"),
}

# core subpackages and modules reachable as attributes after ``import tilelang`` (imported on first access)
_SUBMODULES = frozenset({
    "analysis", "autodd", "autotuner", "backend", "cache", "carver", "cli", "contrib", "engine", "errors",
    "frontend", "instrumentation", "ir", "jit", "language", "layout", "math", "profiler", "testing", "tileop",
    "tools", "transform", "utils",
})


def __getattr__(name: str) -> Any:
    spec = _LAZY.get(name)
    if spec is not None:
        module_name, attr = spec
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"tilelang.{name}")
    elif not name.startswith("_") and _alias.is_backend_alias(name):  # tilelang.cuda -> tilelang_cuda
        return importlib.import_module(f"tilelang.{name}")
    else:
        raise AttributeError(f"module 'tilelang' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


__all__ = ["__version__", "env", "logger", "set_log_level", *_LAZY]
