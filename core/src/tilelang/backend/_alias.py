"""The import hook that makes ``tilelang.<backend>[.sub]`` the installed plugin's ``tilelang_<backend>[.sub]``.

The map comes from entry-point metadata (no list in core). The alias *is* the plugin's module object, so
``tilelang.cpu.codegen is tilelang_cpu.codegen`` and nothing is imported twice. A name that is neither a core
module nor a plugin raises `BackendNotInstalled` (a ModuleNotFoundError) naming the distribution to install.

Reference paths under core's own packages that a plugin provides (``tilelang.contrib.nvcc`` is
``tilelang_cuda.contrib.nvcc``: core carries no vendor toolchain) are declared by the plugin in entry-point group
``tilelang.module_aliases`` and resolved by `ModuleAliasFinder`, which runs only after core's files were searched.
Without the plugin, such a path raises `BackendNotInstalled` naming the distribution (`PROVIDED_BY`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

_core_modules: dict[str, bool] = {}


def _is_core_module(head: str) -> bool:
    known = _core_modules.get(head)
    if known is None:
        package = sys.modules.get("tilelang")
        path = getattr(package, "__path__", None) or []
        known = importlib.machinery.PathFinder.find_spec(f"tilelang.{head}", path) is not None
        _core_modules[head] = known
    return known


def is_backend_alias(name: str) -> bool:
    """Whether ``tilelang.<name>`` names an installed backend plugin (from entry-point metadata)."""
    from tilelang.backend import plugins

    return plugins.package_for_alias(name) is not None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, real_name: str):
        self.real_name = real_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.real_name)

    def exec_module(self, module: ModuleType) -> None:
        """The plugin module is already executed."""


# Reference module paths whose code lives in a first-party plugin, with the backend that provides them: used
# only to say what to install when the plugin is absent (an installed plugin declares its paths in metadata).
PROVIDED_BY = {
    "tilelang.contrib.nvcc": "cuda",
    "tilelang.contrib.nvrtc": "cuda",
    "tilelang.contrib.cutedsl": "cuda",
    "tilelang.jit.adapter.nvrtc": "cuda",
    "tilelang.jit.adapter.cutedsl": "cuda",
    "tilelang.tools.cuda": "cuda",
    "tilelang.cache.cuda_binary_cache": "cuda",
    "tilelang.carver.arch.driver": "cuda",
    "tilelang.contrib.hipcc": "rocm",
    "tilelang.contrib.rocm": "rocm",
    "tilelang.contrib.hip_resource_info": "rocm",
}


def _alias_spec(fullname: str, real_name: str) -> importlib.machinery.ModuleSpec | None:
    real_spec = importlib.util.find_spec(real_name)
    if real_spec is None:
        return None
    return importlib.util.spec_from_loader(fullname, _AliasLoader(real_name),
                                           is_package=real_spec.submodule_search_locations is not None)


def _aliased_parent(fullname: str) -> str | None:
    """The real name of `fullname` when its parent package is an alias of a plugin module (so the child is the
    plugin's child too, never a second copy loaded from the plugin's directory under the alias name)."""
    parent, _, last = fullname.rpartition(".")
    module = sys.modules.get(parent)
    real = getattr(module, "__name__", parent)
    if module is None or real == parent or real.partition(".")[0] == "tilelang":
        return None
    return f"{real}.{last}"


class BackendAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``tilelang.<x>...`` to ``tilelang_<x>...`` for installed plugins."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tilelang.") or fullname.count(".") == 0:
            return None
        child = _aliased_parent(fullname)
        if child is not None:
            return _alias_spec(fullname, child)
        head, _, rest = fullname[len("tilelang."):].partition(".")
        if not head or head.startswith("_") or _is_core_module(head):
            return None
        from tilelang.backend import plugins

        package = plugins.package_for_alias(head)
        if package is None:
            from tilelang.errors import FIRST_PARTY_BACKENDS, BackendNotInstalled, distribution_for

            if head not in FIRST_PARTY_BACKENDS:
                return None  # not a backend this project knows: the usual ModuleNotFoundError

            names = sorted({ep.package.removeprefix("tilelang_") for ep in plugins.entry_points()})
            raise BackendNotInstalled(head, installed=plugins.installed_kinds(), message=(
                f"No module named {fullname!r}: {head!r} is neither part of tilelang-core nor an installed backend "
                f"(installed backends: {', '.join(names) or 'none'}). If {head!r} is a backend, install it with "
                f"`pip install {distribution_for(head)}`."
            ))
        return _alias_spec(fullname, package + (f".{rest}" if rest else ""))


class ModuleAliasFinder(importlib.abc.MetaPathFinder):
    """Last on ``sys.meta_path``: a ``tilelang.<core package>...`` path that core's files lack, resolved to the
    plugin module an installed plugin declares for it, or explained when the providing plugin is absent."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tilelang.") or "tilelang" not in sys.modules:
            return None
        from tilelang.backend import plugins

        real_name = plugins.module_alias_for(fullname)
        if real_name is not None:
            return _alias_spec(fullname, real_name)
        name = fullname
        while name.startswith("tilelang.") and name not in PROVIDED_BY:
            name = name.rpartition(".")[0]
        kind = PROVIDED_BY.get(name)
        if kind is None:
            return None
        from tilelang.errors import BackendNotInstalled, distribution_for

        distribution = distribution_for(kind)
        if any(ep.kind == kind for ep in plugins.entry_points()):
            advice = (f"the installed {distribution} declares no module for it in entry-point group "
                      f"{plugins.MODULE_ALIAS_GROUP!r}: reinstall it (`pip install --force-reinstall {distribution}`)")
        else:
            advice = f"install it with `pip install {distribution}`"
        raise BackendNotInstalled(kind, installed=plugins.installed_kinds(), message=(
            f"No module named {fullname!r}: {name!r} is vendor toolchain code that tilelang-core does not carry; "
            f"the {kind!r} backend provides it: {advice}."
        ))


def install() -> None:
    """Put `BackendAliasFinder` first on ``sys.meta_path`` (once), ahead of the path finder that would load a
    second copy, and `ModuleAliasFinder` last, after it."""
    if not any(isinstance(f, BackendAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, BackendAliasFinder())
    if not any(isinstance(f, ModuleAliasFinder) for f in sys.meta_path):
        sys.meta_path.append(ModuleAliasFinder())
