"""The registry machinery that every concrete registry in `tilelang.backend` is built on.

A `Registry` maps a key (a target kind, an op name, ...) to an ordered set of named entries. It has the rules
every registry shares:

- eager and lazy forms: `register(key, entry)` stores an object, `register_lazy(key, "pkg.mod:attr")` stores
  an import path resolved the first time the key is looked up (the attribute may be one entry or a sequence);
  a plain module path (``"pkg.mod"``) is imported instead, and registers what it defines when it runs;
- registering the same entry twice is a no-op; a different entry under a taken name raises
  `DuplicateRegistrationError` unless ``override=True``;
- a lookup first asks the plugin loader to load the backend that serves the key (entry points), so a plugin is
  imported only when its target kind is first used;
- every registration remembers which plugin made it, so a plugin that fails half-way is rolled back whole;
- listings return copies.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from tilelang.errors import BackendLoadError, DuplicateRegistrationError

T = TypeVar("T")

_lock = threading.RLock()
_all_registries: list[Registry[Any]] = []
# set by the plugin loader while a plugin registers: every entry made then is owned by that plugin
_current_owner: list[str] = []
# called with a key before each lookup; installed by tilelang.backend.plugins
_key_loader: list[Callable[[str], None]] = []


def import_object(import_path: str) -> Any:
    """Resolve ``"package.module:attribute.path"`` (or a plain module path) to the object it names."""
    module_name, _, attr_path = import_path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, attr_path.split(".")):
        obj = getattr(obj, part)
    return obj


def current_owner() -> str | None:
    """The backend whose registration is running, or None for core and user code."""
    return _current_owner[-1] if _current_owner else None


class owned_by:
    """Context manager: registrations made inside belong to backend `owner`."""

    def __init__(self, owner: str):
        self.owner = owner

    def __enter__(self) -> None:
        _current_owner.append(self.owner)

    def __exit__(self, *exc: object) -> None:
        _current_owner.pop()


def load_for_key(key: str) -> None:
    """Let the plugin loader import whatever serves `key` (no-op before the loader is installed)."""
    for loader in _key_loader:
        loader(key)


def rollback_owner(owner: str) -> None:
    """Remove every entry `owner` registered, in every registry."""
    with _lock:
        for registry in _all_registries:
            registry._drop_owner(owner)


class _Entry(Generic[T]):
    __slots__ = ("name", "owner", "value")

    def __init__(self, name: str, value: T, owner: str | None):
        self.name, self.value, self.owner = name, value, owner


class Registry(Generic[T]):
    """Ordered, named entries per key, with eager and lazy registration.

    `what` names the registry in error messages ("host codegen", "device codegen", ...). `name_of` gives an
    entry's name (default: its ``name`` attribute); `validate` raises TypeError for objects of the wrong type.
    `keyed_by_kind` says the key is a target kind, so a lookup triggers loading the plugin that serves it.
    """

    def __init__(self, what: str, entry_type: type | None = None, *, name_of: Callable[[T], str] | None = None,
                 validate: Callable[[Any], None] | None = None, keyed_by_kind: bool = True):
        self.what = what
        self._entry_type = entry_type
        self._name_of = name_of or (lambda entry: entry.name)  # type: ignore[attr-defined]
        self._validate = validate
        self._keyed_by_kind = keyed_by_kind
        self._entries: dict[str, list[_Entry[T]]] = {}
        self._lazy: dict[str, list[tuple[str, str | None]]] = {}
        with _lock:
            _all_registries.append(self)

    # ------------------------------------------------------------------ registration
    def register(self, key: str, entry: T, *, override: bool = False) -> T:
        """Register `entry` under `key`; see the module docstring for the duplicate rules."""
        if self._entry_type is not None and not isinstance(entry, self._entry_type):
            name = self._entry_type.__name__
            article = "an" if name[0] in "AEIOU" else "a"
            raise TypeError(f"expected {article} {name} instance, got {type(entry).__name__}: {entry!r}")
        if self._validate is not None:
            self._validate(entry)
        name = self._name_of(entry)
        with _lock:
            entries = self._entries.setdefault(key, [])
            for i, old in enumerate(entries):
                if old.name != name:
                    continue
                if old.value is entry or old.value == entry:
                    return entry
                if not override:
                    raise DuplicateRegistrationError(
                        f"{self.what} {name!r} is already registered for {key!r}"
                        f"{_by(old.owner)}; pass override=True to replace it"
                    )
                entries[i] = _Entry(name, entry, current_owner())
                return entry
            entries.append(_Entry(name, entry, current_owner()))
        return entry

    def register_lazy(self, key: str, import_path: str) -> None:
        """Register the entry (or sequence of entries) at ``"module:attr"``, imported on first lookup of `key`; a
        plain ``"package.module"`` is imported then, and registers its entries itself."""
        module, _, attr = import_path.partition(":")
        if not module or not all(part.isidentifier() for part in module.split(".")) or (
                ":" in import_path and not attr):
            raise ValueError(f"lazy {self.what} path must look like 'package.module' or 'package.module:attribute', "
                             f"got {import_path!r}")
        with _lock:
            pending = self._lazy.setdefault(key, [])
            if (import_path, current_owner()) not in pending:
                pending.append((import_path, current_owner()))

    def unregister(self, key: str, name: str) -> None:
        """Remove entry `name` under `key` (KeyError when absent)."""
        with _lock:
            entries = self._entries.get(key, [])
            for i, old in enumerate(entries):
                if old.name == name:
                    del entries[i]
                    return
        raise KeyError(f"no {self.what} {name!r} registered for {key!r}")

    # ------------------------------------------------------------------ lookup
    def get(self, key: str) -> list[T]:
        """All entries under `key`, in registration order (loads the serving plugin and lazy entries first)."""
        if self._keyed_by_kind:
            load_for_key(key)
        self._resolve_lazy(key)
        with _lock:
            return [e.value for e in self._entries.get(key, [])]

    def keys(self) -> list[str]:
        """Every key with an entry or a pending lazy entry (does not load plugins)."""
        with _lock:
            return sorted(set(k for k, v in self._entries.items() if v) | set(k for k, v in self._lazy.items() if v))

    def owners(self, key: str) -> list[str | None]:
        """The owning backend of each entry under `key` (same order as `get`)."""
        self._resolve_lazy(key)
        with _lock:
            return [e.owner for e in self._entries.get(key, [])]

    # ------------------------------------------------------------------ internals
    def _resolve_lazy(self, key: str) -> None:
        with _lock:
            pending = self._lazy.pop(key, [])
        for import_path, owner in pending:
            try:
                obj = import_object(import_path)
            except Exception as exc:
                with _lock:  # keep it pending so the next lookup reports the same failure
                    self._lazy.setdefault(key, []).insert(0, (import_path, owner))
                raise BackendLoadError(
                    f"the {self.what} registered{_by(owner)} for {key!r} at {import_path!r} cannot be imported: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if ":" not in import_path:
                continue  # a module path: importing it registered whatever it provides
            values: Iterable[T] = obj if isinstance(obj, Sequence) and not isinstance(obj, str) else [obj]
            with owned_by(owner) if owner else contextlib.nullcontext():
                for value in values:
                    self.register(key, value)

    def _drop_owner(self, owner: str) -> None:
        for key, entries in self._entries.items():
            self._entries[key] = [e for e in entries if e.owner != owner]
        for key, pending in self._lazy.items():
            self._lazy[key] = [p for p in pending if p[1] != owner]

    def _snapshot(self) -> tuple[dict[str, list[_Entry[T]]], dict[str, list[tuple[str, str | None]]]]:
        with _lock:
            return ({k: list(v) for k, v in self._entries.items()}, {k: list(v) for k, v in self._lazy.items()})

    def _restore(self, snap: tuple[dict[str, list[_Entry[T]]], dict[str, list[tuple[str, str | None]]]]) -> None:
        with _lock:
            self._entries = {k: list(v) for k, v in snap[0].items()}
            self._lazy = {k: list(v) for k, v in snap[1].items()}


def accepts(predicate: Callable[[Any], Any] | None, target: Any) -> bool:
    """Whether an entry with `predicate` (``supports_target``; None accepts everything) serves `target`."""
    return predicate is None or bool(predicate(target))


def _by(owner: str | None) -> str:
    return f" by backend {owner!r}" if owner else ""


def snapshot_all() -> list[tuple[Registry[Any], Any]]:
    """Capture every registry's state (tests use this to isolate registrations)."""
    with _lock:
        return [(r, r._snapshot()) for r in _all_registries]


def restore_all(snapshot: list[tuple[Registry[Any], Any]]) -> None:
    """Restore the state captured by `snapshot_all`."""
    for registry, snap in snapshot:
        registry._restore(snap)
