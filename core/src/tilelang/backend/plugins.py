"""Discovering and loading backend plugins through entry points (group ``tilelang.backends``).

The entry point's name is the target kind it serves; its value names the plugin's `Backend` manifest. Nothing
is imported until a kind is first used: registries call `load_kind` before each lookup. Each plugin loads on
its own: one that raises is rolled back, reported once (with its name, distribution and error) and skipped;
its error is raised again only when the user asks for one of its kinds.

Escape hatches: ``TILELANG_DISABLE_PLUGIN_AUTOLOAD=1`` ignores every entry point;
``TILELANG_BLOCK_PLUGINS=cuda,rocm`` ignores the named backends or kinds.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

from tilelang.backend import _registry
from tilelang.backend.manifest import Backend, validate_manifest
from tilelang.errors import BackendLoadError, BackendNotInstalled, DuplicateRegistrationError

GROUP = "tilelang.backends"


class BackendLoadWarning(UserWarning):
    """A backend plugin failed to load; the other backends keep working."""


@dataclass(frozen=True)
class EntryPointInfo:
    """One ``tilelang.backends`` entry point, from metadata alone."""

    kind: str
    value: str
    distribution: str
    version: str

    @property
    def package(self) -> str:
        """The top-level import package of the plugin (``tilelang_cuda`` for ``tilelang_cuda.backend:BACKEND``)."""
        return self.value.split(":")[0].split(".")[0]

    def load(self) -> Any:
        return _registry.import_object(self.value)


@dataclass
class LoadState:
    """What happened when a manifest (shared by its entry points) was loaded."""

    entry_points: list[EntryPointInfo]
    backend: Backend | None = None
    error: BaseException | None = None
    kinds: list[str] = field(default_factory=list)


_lock = threading.RLock()
_entry_points_cache: list[EntryPointInfo] | None = None
_states: dict[str, LoadState] = {}  # keyed by entry-point value
_kinds_done: set[str] = set()
_kinds_loading: dict[str, tuple[int, threading.Event]] = {}  # kind -> (loading thread, set when done)
_reported: set[str] = set()


# ----------------------------------------------------------------------------- discovery
def _read_entry_points() -> list[EntryPointInfo]:
    from importlib import metadata  # ~30 ms: only when a backend is first needed, not at `import tilelang`

    found = []
    for ep in metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        name = dist.metadata["Name"] if dist is not None else "unknown distribution"
        version = dist.version if dist is not None else "?"
        found.append(EntryPointInfo(ep.name, ep.value, name, version))
    return found


def read_entry_points() -> list[EntryPointInfo]:
    """Scan installed distributions for ``tilelang.backends`` entry points (no filtering, no caching)."""
    return _read_entry_points()


def _usable(found: list[EntryPointInfo]) -> list[EntryPointInfo]:
    """`found` less what the escape-hatch variables exclude."""
    from tilelang.env import env

    if str(env.TILELANG_DISABLE_PLUGIN_AUTOLOAD or "").strip() not in ("", "0"):
        return []
    blocked = {b.strip() for b in str(env.TILELANG_BLOCK_PLUGINS or "").split(",") if b.strip()}
    return [ep for ep in found if ep.kind not in blocked and ep.package.removeprefix("tilelang_") not in blocked]


def entry_points() -> list[EntryPointInfo]:
    """Every usable ``tilelang.backends`` entry point (metadata only; honours the escape-hatch variables)."""
    global _entry_points_cache
    with _lock:
        if _entry_points_cache is None:
            _entry_points_cache = _usable(_read_entry_points())
        return list(_entry_points_cache)


def prime_entry_points(found: list[EntryPointInfo]) -> None:
    """Use `found` (e.g. a snapshot cached on disk) instead of scanning distributions; no-op once discovered."""
    global _entry_points_cache
    with _lock:
        if _entry_points_cache is None:
            _entry_points_cache = _usable(list(found))


def installed_kinds() -> list[str]:
    """Target kinds that an installed plugin claims or that were registered directly."""
    from tilelang.backend.target import _KINDS

    return sorted({ep.kind for ep in entry_points()} | set(_KINDS.keys()))


def package_for_alias(name: str) -> str | None:
    """The plugin package that ``tilelang.<name>`` stands for (``cuda`` -> ``tilelang_cuda``), from metadata."""
    for ep in entry_points():
        if ep.package == f"tilelang_{name}" or ep.package == name:
            return ep.package
    return None


# ----------------------------------------------------------------------------- module aliases
MODULE_ALIAS_GROUP = "tilelang.module_aliases"
_module_aliases: dict[str, str] | None = None


def module_aliases() -> dict[str, str]:
    """Reference module paths that installed plugins provide, declared in entry-point group
    ``tilelang.module_aliases`` (name: the path, e.g. ``tilelang.contrib.nvcc``; value: the plugin's module,
    e.g. ``tilelang_cuda.contrib.nvcc``); metadata only, cached; the escape-hatch variables apply."""
    global _module_aliases
    with _lock:
        if _module_aliases is not None:
            return dict(_module_aliases)
    from importlib import metadata

    from tilelang.env import env

    found: dict[str, str] = {}
    if str(env.TILELANG_DISABLE_PLUGIN_AUTOLOAD or "").strip() in ("", "0"):
        blocked = {b.strip() for b in str(env.TILELANG_BLOCK_PLUGINS or "").split(",") if b.strip()}
        for ep in metadata.entry_points(group=MODULE_ALIAS_GROUP):
            if ep.value.split(".")[0].removeprefix("tilelang_") not in blocked:
                found.setdefault(ep.name, ep.value)
    with _lock:
        _module_aliases = found
    return dict(found)


def module_alias_for(fullname: str) -> str | None:
    """The plugin module that reference path `fullname` stands for: the longest declared alias that is
    `fullname` or a package above it, with the rest of the path appended (None when no plugin declares one)."""
    aliases = module_aliases()
    name = fullname
    while name.startswith("tilelang."):
        real = aliases.get(name)
        if real is not None:
            return real + fullname[len(name):]
        name = name.rpartition(".")[0]
    return None


# ----------------------------------------------------------------------------- TVM global functions
GLOBAL_FUNC_GROUP = "tilelang.global_funcs"
_global_funcs_done = False


def register_declared_global_funcs() -> list[str]:
    """Register the TVM global functions that installed plugins declare in entry-point group
    ``tilelang.global_funcs`` (name: the global function, e.g. ``target.build.tilelang_hip_without_compile``;
    value: ``"module:attr"`` of the callable). Only a trampoline is registered: the plugin module is imported on
    the first call, so this costs a metadata scan, not a plugin import. A name TVM already has is left alone; the
    escape-hatch variables apply. Called once, when TVM is first imported; returns the names registered."""
    global _global_funcs_done
    from importlib import metadata

    import tvm_ffi

    with _lock:
        if _global_funcs_done:
            return []
        _global_funcs_done = True
    from tilelang.env import env

    if str(env.TILELANG_DISABLE_PLUGIN_AUTOLOAD or "").strip() not in ("", "0"):
        return []
    blocked = {b.strip() for b in str(env.TILELANG_BLOCK_PLUGINS or "").split(",") if b.strip()}
    done = []
    for ep in metadata.entry_points(group=GLOBAL_FUNC_GROUP):
        package = ep.value.split(":")[0].split(".")[0]
        if package.removeprefix("tilelang_") in blocked or tvm_ffi.get_global_func(ep.name, allow_missing=True):
            continue
        tvm_ffi.register_global_func(ep.name, _trampoline(ep.value))
        done.append(ep.name)
    return done


def _trampoline(import_path: str) -> Any:
    def call(*args: Any) -> Any:
        return _registry.import_object(import_path)(*args)

    call.__doc__ = f"Calls {import_path} (imported on first use)."
    return call


# ----------------------------------------------------------------------------- loading
def report_once(key: str, message: str) -> None:
    """Warn with `message` the first time `key` is reported in this process."""
    with _lock:
        if key in _reported:
            return
        _reported.add(key)
    warnings.warn(message, BackendLoadWarning, stacklevel=3)


def _load_entry(ep: EntryPointInfo) -> LoadState:
    with _lock:
        state = _states.get(ep.value)
        if state is not None:
            if ep not in state.entry_points:
                state.entry_points.append(ep)
            return state
        state = _states[ep.value] = LoadState([ep])
    owner = None
    try:
        backend = validate_manifest(ep.load(), f"{ep.kind} = {ep.value!r} of {ep.distribution}")
        owner = backend.name
        if backend.sdk_version is not None:
            from tilelang.backend.sdk import check_sdk_version

            check_sdk_version(backend.sdk_version, f"{backend.name} ({ep.distribution} {ep.version})")
        if ep.kind not in backend.target_kinds:
            raise BackendLoadError(
                f"entry point {ep.kind!r} names backend {backend.name!r}, whose target_kinds "
                f"{list(backend.target_kinds)} do not include {ep.kind!r}"
            )
        for other in _states.values():
            if other is not state and other.backend is not None and other.backend.name == backend.name:
                raise DuplicateRegistrationError(
                    f"backend name {backend.name!r} is already taken by {other.entry_points[0].distribution}"
                )
        with _registry.owned_by(backend.name):
            backend.register()
        _register_hooks(backend, ep)
        state.backend = backend
    except Exception as exc:
        if owner is not None:
            _registry.rollback_owner(owner)
        state.error = exc
        report_once(
            f"load:{ep.value}",
            f"tilelang: backend plugin {ep.kind!r} ({ep.distribution} {ep.version}, {ep.value}) failed to load "
            f"and is disabled; other backends keep working. Error: {type(exc).__name__}: {exc}",
        )
    return state


def _register_hooks(backend: Backend, ep: EntryPointInfo) -> None:
    """Register the manifest's module and `backend.hook_modules` with the PluginManager and validate them: a hook
    implementation that no spec declares (a misspelt name) or whose arguments the spec does not have is a
    `BackendLoadError` naming the plugin (the plugin is then rolled back like any plugin that fails to load)."""
    import importlib

    import pluggy

    from tilelang.backend import hooks

    modules = [ep.value.split(":")[0], *backend.hook_modules]
    pm = hooks.plugin_manager()
    registered = []
    try:
        for i, module_name in enumerate(dict.fromkeys(modules)):
            module = importlib.import_module(module_name)
            name = backend.name if i == 0 else f"{backend.name}:{module_name}"
            if pm.get_plugin(name) is None and not pm.is_registered(module):
                pm.register(module, name=name)
                registered.append(name)
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        for name in registered:
            pm.unregister(name=name)
        raise BackendLoadError(
            f"backend {backend.name!r} ({ep.distribution}) has an invalid hook implementation: {exc}. Check it "
            f"against tilelang.backend.hookspecs (or mark it @hookimpl(optionalhook=True))."
        ) from None


def load_kind(kind: str) -> None:
    """Load every plugin whose entry point names `kind` (once; failures are recorded, not raised).

    A kind counts as loaded only once its plugins have loaded: a second thread asking meanwhile waits for the
    first, so it never sees a half-filled registry; the loading thread itself (a plugin whose `register` looks up
    its own kind) does not wait."""
    if kind in _kinds_done:
        return
    me = threading.get_ident()
    with _lock:
        if kind in _kinds_done:
            return
        loading = _kinds_loading.get(kind)
        if loading is None:
            _kinds_loading[kind] = loading = (me, threading.Event())
            owner = True
        else:
            owner = False
    thread, done = loading
    if not owner:
        if thread != me:
            done.wait()
        return
    try:
        for ep in entry_points():
            if ep.kind == kind:
                _load_entry(ep)
    finally:
        with _lock:
            _kinds_done.add(kind)
            _kinds_loading.pop(kind, None)
        done.set()


def load_all() -> None:
    """Load every installed plugin (the CLI and ``target="auto"`` need them all)."""
    for ep in entry_points():
        load_kind(ep.kind)


def states() -> list[LoadState]:
    """The load state of every plugin loaded or attempted so far."""
    with _lock:
        return list(_states.values())


def check_kind(kind: str) -> None:
    """Raise the error that explains why `kind` has no working backend (nothing when it has one)."""
    load_kind(kind)
    failed = [s for s in states() if s.error is not None and any(ep.kind == kind for ep in s.entry_points)]
    working = [s for s in states() if s.backend is not None and kind in s.backend.target_kinds]
    if failed and not working:
        state = failed[0]
        ep = state.entry_points[0]
        raise BackendLoadError(
            f"the backend serving target kind {kind!r} ({ep.distribution} {ep.version}) failed to load: "
            f"{type(state.error).__name__}: {state.error}. Reinstall it, or block it with TILELANG_BLOCK_PLUGINS."
        ) from state.error
    from tilelang.backend.target import _KINDS

    if not working and not _KINDS.get(kind):
        raise BackendNotInstalled(kind, installed=installed_kinds())


def raise_for_missing_kind(kind: str) -> None:
    """Called when `kind` has no TargetKind: explain (missing or broken plugin, or a plugin that forgot it)."""
    check_kind(kind)
    raise BackendLoadError(f"the backend serving {kind!r} loaded but registered no TargetKind for it")


def reset() -> None:
    """Forget discovery and load state (tests; registries are reset separately)."""
    global _entry_points_cache, _module_aliases
    from tilelang.backend import target

    with target._detector_lock:
        for kind in target._mirrored_detectors:
            target._TARGET_DETECTORS.pop(kind, None)
        target._mirrored_detectors.clear()
    with _lock:
        _entry_points_cache = None
        _module_aliases = None
        _states.clear()
        _kinds_done.clear()
        _kinds_loading.clear()
        _reported.clear()


_registry._key_loader.append(load_kind)
