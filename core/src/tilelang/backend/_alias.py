"""The import hook that makes ``tilelang.<backend>[.sub]`` the installed plugin's ``tilelang_<backend>[.sub]``.

The map comes from entry-point metadata (no list in core). The alias *is* the plugin's module object, so
``tilelang.cpu.codegen is tilelang_cpu.codegen`` and nothing is imported twice. A name that is neither a core
module nor a plugin raises `BackendNotInstalled` (a ModuleNotFoundError) naming the distribution to install.
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


class BackendAliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``tilelang.<x>...`` to ``tilelang_<x>...`` for installed plugins."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("tilelang.") or fullname.count(".") == 0:
            return None
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
        real_name = package + (f".{rest}" if rest else "")
        real_spec = importlib.util.find_spec(real_name)
        if real_spec is None:
            return None
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(real_name),
                                               is_package=real_spec.submodule_search_locations is not None)
        return spec


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), ahead of the path finder that would load a second copy."""
    if not any(isinstance(f, BackendAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, BackendAliasFinder())
