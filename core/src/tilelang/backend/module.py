"""`BackendModule` and `BackendContext`: the reference TileLang's compiler-facing view of a backend.

A `BackendModule` names a backend, the target kinds it owns, one `PassPipeline` and one device codegen per
kind, its host codegens and hooks, the execution backends it can hand its output to (in ``"auto"`` preference
order) and its toolchain callbacks. `create_backend_context` resolves a user's target / host / execution backend
into one immutable `BackendContext` per compilation.

In this project a backend is an installed plugin (entry points, `tilelang.backend.Backend` manifest) registering
into core's registries; `get_backend` and `list_backends` build each plugin's `BackendModule` from those
registries (loading the plugin first) and register it here. `register_backend` also accepts a hand-written
module, as in the reference: it validates it, publishes it once (a different redeclaration is an error) and
registers its callbacks as TVM global functions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tilelang.backend.device_codegen import DeviceCodegen
from tilelang.backend.execution_backend import ExecutionBackendSpec
from tilelang.backend.host_codegen import HostCodegen, HostCodegenHook
from tilelang.backend.pass_pipeline import PassPipeline

__all__ = ["BackendModule", "BackendContext", "register_backend", "get_backend", "list_backends",
           "create_backend_context"]

BackendCallback = Callable[..., object]
TargetPredicate = Callable[[Any], bool]


def _target_kind(target: Any) -> str:
    return str(target.kind.name)


@dataclass(frozen=True, slots=True)
class BackendModule:
    """The complete compiler-facing declaration of one backend (validated on construction)."""

    name: str
    target_kinds: tuple[str, ...]
    pipelines: Mapping[str, PassPipeline]
    device_codegens: Mapping[str, DeviceCodegen]
    execution_backends: tuple[ExecutionBackendSpec, ...]
    supports_target: TargetPredicate | None = None
    host_codegens: Mapping[str, HostCodegen] = field(default_factory=dict)
    host_codegen_hooks: Mapping[str, tuple[HostCodegenHook, ...]] = field(default_factory=dict)
    callbacks: Mapping[str, BackendCallback] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kinds = tuple(self.target_kinds)
        who = f"BackendModule {self.name!r}"
        if not self.name:
            raise ValueError("BackendModule.name must not be empty")
        if not kinds or not all(kinds):
            raise ValueError(f"{who} must own at least one non-empty target kind")
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"{who} target kinds must be unique: {list(kinds)}")
        pipelines = MappingProxyType(dict(self.pipelines))
        if set(pipelines) != set(kinds):
            raise ValueError(f"{who} must define exactly one pipeline for every target kind {list(kinds)}")
        for kind, pipeline in pipelines.items():
            if pipeline.name != kind:
                raise ValueError(f"{who} pipeline {pipeline.name!r} does not match target kind {kind!r}")
        device_codegens = MappingProxyType(dict(self.device_codegens))
        if set(device_codegens) != set(kinds):
            raise ValueError(f"{who} must define device codegen for every target kind {list(kinds)}")
        hooks = MappingProxyType({k: tuple(v) for k, v in dict(self.host_codegen_hooks).items()})
        foreign = set(hooks) - set(kinds)
        if foreign:
            raise ValueError(f"{who} host codegen hook targets are not owned by this backend: {sorted(foreign)}")
        if any(not v for v in hooks.values()):
            raise ValueError(f"{who} host codegen hook lists must not be empty")
        specs = tuple(self.execution_backends)
        names = [spec.name for spec in specs]
        if not specs:
            raise ValueError(f"{who} must define at least one execution backend")
        if len(set(names)) != len(names):
            raise ValueError(f"{who} execution backend names must be unique: {names}")
        host_codegens = MappingProxyType(dict(self.host_codegens))
        if any(spec.enable_host_codegen for spec in specs) and not host_codegens:
            raise ValueError(f"{who} enables host codegen but defines no host codegen targets")
        callbacks = MappingProxyType(dict(self.callbacks))
        if any(not name for name in callbacks):
            raise ValueError(f"{who} callback names must not be empty")
        for attr, value in (("target_kinds", kinds), ("pipelines", pipelines), ("device_codegens", device_codegens),
                            ("execution_backends", specs), ("host_codegens", host_codegens),
                            ("host_codegen_hooks", hooks), ("callbacks", callbacks)):
            object.__setattr__(self, attr, value)

    # ------------------------------------------------------------------------------------------ matching
    def matches(self, target: Any) -> bool:
        """Whether this backend owns `target` (its kind, and its predicate when it has one)."""
        if _target_kind(target) not in self.target_kinds:
            return False
        return self.supports_target is None or bool(self.supports_target(target))

    def _require_target(self, target: Any) -> str:
        if not self.matches(target):
            raise ValueError(f"Backend {self.name!r} does not match target {target}")
        return _target_kind(target)

    # ------------------------------------------------------------------------------------------ components
    def get_pipeline(self, target: Any) -> PassPipeline:
        return self.pipelines[self._require_target(target)]

    def lower(self, mod: Any, target: Any) -> Any:
        return self.get_pipeline(target).lower(mod, target)

    def get_device_codegen(self, target: Any) -> DeviceCodegen:
        return self.device_codegens[self._require_target(target)]

    def codegen_device(self, mod: Any, target: Any, *, compile_device: bool = True) -> Any:
        return self.get_device_codegen(target).lower(mod, target, compile_device=compile_device)

    def get_host_codegen(self, target_host: Any) -> HostCodegen:
        codegen = self.host_codegens.get(_target_kind(target_host))
        if codegen is None:
            raise ValueError(f"Backend {self.name!r} has no host codegen matching target {target_host}")
        return codegen

    def codegen_host(self, mod: Any, target_host: Any) -> Any:
        return self.get_host_codegen(target_host).lower(mod, target_host)

    def preprocess_host_codegen(self, mod: Any, target_host: Any, target: Any) -> Any:
        for hook in self.host_codegen_hooks.get(self._require_target(target), ()):
            mod = hook.lower(mod, target_host, target)
        return mod

    # ------------------------------------------------------------------------------------------ execution
    def allowed_execution_backends(self, target: Any, *, include_unavailable: bool = True) -> tuple[str, ...]:
        """The execution backend names serving `target`, in ``"auto"`` preference order."""
        self._require_target(target)
        specs = [s for s in self.execution_backends if s.matches(target)]
        if not include_unavailable:
            specs = [s for s in specs if s.is_available()]
        return tuple(s.name for s in specs)

    def resolve_execution_backend(self, requested: str | None, target: Any) -> ExecutionBackendSpec:
        """The spec for `requested` (``"auto"``/None: the first available); ValueError naming the allowed ones."""
        self._require_target(target)
        name = None if requested is None else str(requested).lower()
        specs = [s for s in self.execution_backends if s.matches(target)]
        available = [s for s in specs if s.is_available()]
        if name in (None, "auto"):
            if not available:
                allowed = ", ".join(s.name for s in specs) or "<none>"
                raise ValueError(f"No available execution backend for target {_target_kind(target)!r}. "
                                 f"Allowed: {allowed}.")
            return available[0]
        spec = next((s for s in specs if s.name == name), None)
        if spec is None:
            spec = next((s for s in specs if s.backend is not None and s.backend.answers_to(name, target)), None)
        if spec is None:
            allowed = ", ".join(s.name for s in specs) or "<none>"
            raise ValueError(f"Invalid execution backend {requested!r} for target {_target_kind(target)!r}. "
                             f"Allowed: {allowed}. Tip: use execution_backend='auto'.")
        if not spec.is_available():
            ready = ", ".join(s.name for s in available) or "<none>"
            raise ValueError(f"Execution backend {requested!r} requires extra dependencies and is not available "
                             f"now. Try one of: {ready}.")
        return spec


@dataclass(frozen=True, slots=True)
class BackendContext:
    """The resolved backend state of one compilation: module, target, host target, execution backend."""

    module: BackendModule
    target: Any
    target_host: Any
    execution_backend: ExecutionBackendSpec

    def __post_init__(self) -> None:
        if not self.module.matches(self.target):
            raise ValueError(f"Backend module {self.module.name!r} does not match target {self.target}")
        if self.execution_backend not in self.module.execution_backends:
            raise ValueError(f"Execution backend {self.execution_backend.name!r} is not declared by backend "
                             f"module {self.module.name!r}")
        if not self.execution_backend.matches(self.target):
            raise ValueError(f"Execution backend {self.execution_backend.name!r} does not match target "
                             f"{self.target}")

    @property
    def name(self) -> str:
        return self.module.name

    def lower(self, mod: Any) -> Any:
        return self.module.lower(mod, self.target)

    def codegen_device(self, mod: Any, *, compile_device: bool | None = None) -> Any:
        if compile_device is None:
            compile_device = self.execution_backend.enable_device_compile
        return self.module.codegen_device(mod, self.target, compile_device=compile_device)

    def preprocess_host_codegen(self, mod: Any) -> Any:
        return self.module.preprocess_host_codegen(mod, self.target_host, self.target)

    def codegen_host(self, mod: Any) -> Any:
        return self.module.codegen_host(mod, self.target_host)


# ---------------------------------------------------------------------------------------------- registry
_lock = threading.RLock()
_BACKENDS: dict[str, BackendModule] = {}
_TARGET_KIND_INDEX: dict[str, list[str]] = {}


def register_backend(backend: BackendModule) -> BackendModule:
    """Validate and publish `backend`; registering an equal declaration again returns the registered one."""
    with _lock:
        old = _BACKENDS.get(backend.name)
        if old is not None:
            if old == backend:
                return old
            raise ValueError(f"Backend {backend.name!r} is already registered with a different declaration")
        for kind in backend.target_kinds:
            for other in _TARGET_KIND_INDEX.get(kind, ()):
                if _BACKENDS[other].supports_target is None or backend.supports_target is None:
                    raise ValueError(f"Backends sharing target kind {kind!r} ({other!r} and {backend.name!r}) must "
                                     "define supports_target predicates")
        if backend.callbacks:
            import tvm_ffi

            for name, callback in backend.callbacks.items():
                tvm_ffi.register_global_func(name, f=callback, override=True)
        _BACKENDS[backend.name] = backend
        for kind in backend.target_kinds:
            _TARGET_KIND_INDEX.setdefault(kind, []).append(backend.name)
    return backend


def get_backend(name: str) -> BackendModule:
    """The backend module called `name` (loading the installed plugin of that name first)."""
    with _lock:
        found = _BACKENDS.get(name)
    if found is not None:
        return found
    _derive_installed(only=name)
    with _lock:
        found = _BACKENDS.get(name)
    if found is None:
        available = ", ".join(sorted(list_backends())) or "<none>"
        raise ValueError(f"Unknown backend {name!r}. Available: {available}")
    return found


def list_backends() -> dict[str, BackendModule]:
    """A copy of every backend module (every installed plugin is loaded)."""
    _derive_installed()
    with _lock:
        return dict(_BACKENDS)


def _resolve_module(target: Any) -> BackendModule:
    kind = _target_kind(target)
    _derive_installed(kind=kind)
    with _lock:
        names = list(_TARGET_KIND_INDEX.get(kind, ()))
        candidates = [_BACKENDS[n] for n in names if _BACKENDS[n].matches(target)]
    if not candidates:
        if not names:
            from tilelang.backend import plugins

            plugins.check_kind(kind)
            raise ValueError(f"No backend registered for target kind {kind!r}. Available: "
                             f"{', '.join(sorted(_TARGET_KIND_INDEX)) or '<none>'}")
        raise ValueError(f"No backend matches target {target}")
    if len(candidates) > 1:
        raise ValueError(f"Multiple backends match target {target}: {', '.join(c.name for c in candidates)}")
    return candidates[0]


def create_backend_context(target: Any = "auto", target_host: Any = None,
                           execution_backend: str | None = "auto") -> BackendContext:
    """Resolve a user's target, host target and execution backend into one `BackendContext`."""
    from tvm.target import Target

    from tilelang.backend.target import split_targets

    pair = split_targets(target, target_host)
    host = target_host if isinstance(target_host, Target) else pair.tvm_host
    device = Target(pair.tvm_device, host)
    module = _resolve_module(device)
    spec = module.resolve_execution_backend(execution_backend, device)
    return BackendContext(module=module, target=device, target_host=host, execution_backend=spec)


# ---------------------------------------------------------------------------------------------- derived views
_PIPELINES: dict[str, PassPipeline] = {}


def _pipeline_for(kind: str) -> PassPipeline:
    """The one `PassPipeline` of target kind `kind` (core's pipeline with the kind's registered passes)."""
    with _lock:
        pipeline = _PIPELINES.get(kind)
        if pipeline is None:

            def lower(mod: Any, target: Any) -> Any:
                from tilelang.transform import pipeline as core_pipeline

                host = target.host if getattr(target, "host", None) is not None else target
                return core_pipeline.lower_tile_program(mod, target, host)

            pipeline = _PIPELINES[kind] = PassPipeline(kind, lower)
        return pipeline


def _derive_installed(*, only: str | None = None, kind: str | None = None) -> None:
    """Build and register the BackendModule of each loaded plugin not registered yet."""
    from tilelang.backend import plugins

    if kind is not None:
        plugins.load_kind(kind)
    else:
        plugins.load_all()
    for state in plugins.states():
        manifest = state.backend
        if manifest is None or (only is not None and manifest.name != only):
            continue
        with _lock:
            if manifest.name in _BACKENDS:
                continue
        module = _module_of(manifest)
        if module is not None:
            register_backend(module)


def _module_of(manifest: Any) -> BackendModule | None:
    from tilelang.backend import _registry
    from tilelang.backend.device_codegen import _DEVICE_CODEGENS
    from tilelang.backend.execution import _EXECUTION
    from tilelang.backend.execution_backend import spec_for
    from tilelang.backend.host_codegen import _HOST_HOOKS, STANDARD_HOST_CODEGENS
    from tilelang.backend.target import target_kind_spec, tvm_kind_names

    known = tvm_kind_names()
    kinds, codegens, specs, hooks = [], {}, [], {}
    for kind in manifest.target_kinds:
        if kind not in known and target_kind_spec(kind).to_tvm is None:
            continue  # an alias such as ``cpu`` or ``hip``: TVM sees the kind it normalises to
        owned = [cg for cg, owner in zip(_DEVICE_CODEGENS.get(kind), _DEVICE_CODEGENS.owners(kind))
                 if owner == manifest.name]
        if not owned:
            continue
        kinds.append(kind)
        codegens[kind] = owned[0]
        for backend, owner in zip(_EXECUTION.get(kind), _EXECUTION.owners(kind)):
            if owner == manifest.name:
                for name in _listed_names(backend, kind):
                    spec = spec_for(backend, name)
                    if spec not in specs:
                        specs.append(spec)
        own_hooks = tuple(h for h, o in zip(_HOST_HOOKS.get(kind), _HOST_HOOKS.owners(kind)) if o == manifest.name)
        if own_hooks:
            hooks[kind] = own_hooks
    if not kinds or not specs:
        return None
    callbacks = {name: _registry.import_object(path) for name, path in manifest.callbacks}
    return BackendModule(
        name=manifest.name, target_kinds=tuple(kinds), pipelines={k: _pipeline_for(k) for k in kinds},
        device_codegens=codegens, execution_backends=tuple(specs), supports_target=manifest.supports_target,
        host_codegens={cg.name: cg for cg in STANDARD_HOST_CODEGENS}, host_codegen_hooks=hooks, callbacks=callbacks,
    )


def _listed_names(backend: Any, kind: str) -> tuple[str, ...]:
    """The names `backend` lists for targets of `kind` (each spec's predicate narrows it per target)."""
    return tuple(backend.names_for({"kind": kind}))
