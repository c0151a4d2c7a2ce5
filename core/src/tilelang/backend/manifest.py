"""The plugin contract: the frozen `Backend` manifest an entry point of group ``tilelang.backends`` names.

A distribution ``tilelang-<x>`` ships package ``tilelang_<x>`` whose ``backend.py`` defines ``BACKEND =
Backend(...)`` and declares one entry point per target kind it serves::

    [project.entry-points."tilelang.backends"]
    cuda = "tilelang_cuda.backend:BACKEND"

Core imports that module only when one of those kinds is first used, then calls ``BACKEND.register()``, which
fills core's registries (eagerly or with lazy import paths) and must do no expensive work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.errors import InvalidManifestError

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """One line of a backend's toolchain health report (``tilelang backends``)."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Backend:
    """What a backend plugin declares about itself.

    - ``name``: the backend's name; ``tilelang.<name>`` aliases the plugin's package.
    - ``target_kinds``: every target kind it serves; each needs an entry point of that name.
    - ``register``: fills core's registries; called once, when the first of its kinds is used.
    - ``hook_modules``: import paths of modules with ``@hookimpl`` functions, registered with the PluginManager.
    - ``toolchain``: reports the health of the tools the backend needs (compilers, drivers, adapters).
    - ``callbacks``: FFI callbacks of the backend's toolchain, ``{global function name: "module:attr"}``;
      imported and registered as TVM global functions when the backend's `tilelang.backend.BackendModule` is
      built.
    - ``supports_target``: for a backend that shares a target kind with another (a variant such as CuTeDSL on
      ``cuda``), the predicate on a ``tvm.target.Target`` telling which targets are its own.
    - ``sdk_version``: the backend SDK version (``"MAJOR.MINOR"``, `tilelang.backend.sdk.SDK_VERSION`) the
      backend was written for; core refuses to load it when its own SDK cannot serve that version.
    """

    name: str
    target_kinds: tuple[str, ...]
    register: Callable[[], None]
    hook_modules: tuple[str, ...] = ()
    toolchain: Callable[[], list[ToolStatus]] | None = None
    description: str = ""
    callbacks: tuple[tuple[str, str], ...] = ()
    supports_target: Callable[[Any], bool] | None = None
    sdk_version: str | None = None

    def __post_init__(self) -> None:
        def fail(rule: str) -> None:
            raise InvalidManifestError(f"backend manifest {self.name!r}: {rule}")

        if not isinstance(self.name, str) or not _NAME.match(self.name):
            fail("name must be a lowercase identifier such as 'cuda'")
        if not isinstance(self.target_kinds, tuple) or not self.target_kinds:
            fail("target_kinds must be a non-empty tuple of target kind names")
        for kind in self.target_kinds:
            if not isinstance(kind, str) or not _NAME.match(kind):
                fail(f"target kind {kind!r} must be a lowercase identifier")
        if len(set(self.target_kinds)) != len(self.target_kinds):
            fail("target_kinds lists a kind twice")
        if not callable(self.register):
            fail("register must be callable")
        if not isinstance(self.hook_modules, tuple) or not all(isinstance(m, str) for m in self.hook_modules):
            fail("hook_modules must be a tuple of module import paths")
        if self.toolchain is not None and not callable(self.toolchain):
            fail("toolchain must be callable or None")
        if isinstance(self.callbacks, dict):
            object.__setattr__(self, "callbacks", tuple(self.callbacks.items()))
        for entry in self.callbacks:
            if (not isinstance(entry, tuple) or len(entry) != 2 or not all(isinstance(x, str) for x in entry)
                    or ":" not in entry[1]):
                fail("callbacks must map global function names to 'module:attr' import paths")
        if self.supports_target is not None and not callable(self.supports_target):
            fail("supports_target must be callable or None")
        if self.sdk_version is not None:
            from tilelang.backend.sdk import _parse

            try:
                _parse(self.sdk_version, "sdk_version")
            except ValueError as exc:
                fail(str(exc))

    def toolchain_report(self) -> list[ToolStatus]:
        """The toolchain health lines; a failing check becomes a not-ok line instead of an exception."""
        if self.toolchain is None:
            return []
        try:
            return list(self.toolchain())
        except Exception as exc:  # health reporting must never crash the CLI
            return [ToolStatus("toolchain check", False, f"raised {exc!r}")]


def validate_manifest(obj: Any, where: str) -> Backend:
    """`obj` as a Backend, or InvalidManifestError naming `where` (the entry point) and what it found."""
    if not isinstance(obj, Backend):
        raise InvalidManifestError(
            f"entry point {where} must name a tilelang.backend.Backend instance, got {type(obj).__name__}"
        )
    return obj
