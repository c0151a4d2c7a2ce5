"""Host codegen: how the host half of a kernel (argument checks, launch) becomes a runtime module.

Host codegens are registered per host target kind (``"llvm"``, ``"c"``); several may share a kind and are told
apart by their ``supports_target`` predicate. Hooks are registered per *device* target kind and rewrite the
host module before the host codegen runs (e.g. a device backend adding its launch glue).

Core registers the two standard host codegens built on TVM's ``target.build.llvm`` / ``target.build.c``;
backends add hooks and, when needed, their own host codegens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tilelang.backend._registry import Registry, accepts
from tilelang.backend.target import kind_of
from tilelang.errors import AmbiguousImplementationError, NoImplementationError

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target
else:
    IRModule = Target = Any

HostCodegenFunc = Callable[["IRModule", "Target"], Any]
HostCodegenHookFunc = Callable[["IRModule", "Target", "Target"], "IRModule"]
TargetPredicate = Callable[["Target"], bool]

__all__ = [
    "HostCodegen", "HostCodegenHook", "HostCodegenFunc", "HostCodegenHookFunc", "TargetPredicate",
    "global_func_host_codegen", "register_host_codegen", "register_lazy_host_codegen",
    "register_host_codegen_hook", "register_lazy_host_codegen_hooks", "allowed_host_codegens_for_target",
    "host_codegens_for_target",
    "apply_host_codegen_hooks", "resolve_host_codegen", "host_codegen_hooks_for",
]


def global_func_host_codegen(global_func_name: str) -> HostCodegenFunc:
    """A host codegen that calls the TVM global function `global_func_name(mod, target_host)`."""

    def build(mod: IRModule, target_host: Target) -> Any:
        import tvm_ffi

        func = tvm_ffi.get_global_func(global_func_name, allow_missing=True)
        if func is None:
            raise NoImplementationError(f"TVM global function {global_func_name!r} is not available in this TVM build")
        return func(mod, target_host)

    build.__name__ = f"build_via_{global_func_name.replace('.', '_')}"
    return build


@dataclass(frozen=True, slots=True)
class HostCodegen:
    """Builds the host module for one host target variant."""

    name: str
    build: HostCodegenFunc
    supports_target: TargetPredicate | None = None

    def matches(self, target_host: Target) -> bool:
        """Whether this codegen serves `target_host` (always, without a predicate)."""
        return accepts(self.supports_target, target_host)

    def lower(self, mod: IRModule, target_host: Target) -> Any:
        """Build `mod` for `target_host`."""
        return self.build(mod, target_host)


@dataclass(frozen=True, slots=True)
class HostCodegenHook:
    """A device backend's rewrite of the host module, applied before host codegen."""

    name: str
    apply: HostCodegenHookFunc
    supports_target: TargetPredicate | None = None

    def matches(self, target: Target) -> bool:
        """Whether this hook applies to device target `target` (always, without a predicate)."""
        return accepts(self.supports_target, target)

    def lower(self, mod: IRModule, target_host: Target, target: Target) -> IRModule:
        """Rewrite host module `mod` for `target_host`, given device target `target`."""
        return self.apply(mod, target_host, target)


# Host kinds ("llvm", "c") are served by core itself, so this registry does not trigger plugin loading.
_HOST_CODEGENS: Registry[HostCodegen] = Registry("host codegen", HostCodegen, keyed_by_kind=False)
_HOST_HOOKS: Registry[HostCodegenHook] = Registry("host codegen hook", HostCodegenHook)


def register_host_codegen(target_host_kind: str, codegen: HostCodegen, *, override: bool = False) -> HostCodegen:
    """Register `codegen` for host target kind `target_host_kind`."""
    return _HOST_CODEGENS.register(target_host_kind, codegen, override=override)


def register_lazy_host_codegen(target_host_kind: str, import_path: str) -> None:
    """Register the HostCodegen at ``"module:attr"`` — or a module that registers its own when imported — imported
    when `target_host_kind` is first resolved."""
    _HOST_CODEGENS.register_lazy(target_host_kind, import_path)


def register_host_codegen_hook(target_kind: str, hook: HostCodegenHook, *, override: bool = False) -> HostCodegenHook:
    """Register `hook` to run before host codegen for device target kind `target_kind`."""
    return _HOST_HOOKS.register(target_kind, hook, override=override)


def register_lazy_host_codegen_hooks(target_kind: str, import_path: str) -> None:
    """Register the hook (or sequence of hooks) at ``"module:attr"`` — or a module that registers its own when
    imported — for device target kind `target_kind`."""
    _HOST_HOOKS.register_lazy(target_kind, import_path)


def host_codegens_for_target(target_host: Target) -> list[HostCodegen]:
    """The registered host codegens of `target_host`'s kind whose predicate accepts it, in order."""
    return [cg for cg in _HOST_CODEGENS.get(kind_of(target_host)) if cg.matches(target_host)]


def allowed_host_codegens_for_target(target_host: Target) -> list[str]:
    """The names of the host codegens that accept `target_host`, in registration order (as TileLang 0.1.14)."""
    return [cg.name for cg in host_codegens_for_target(target_host)]


def resolve_host_codegen(target_host: Target) -> HostCodegen:
    """The one host codegen for `target_host`; none or several matching is an error."""
    kind = kind_of(target_host)
    found = host_codegens_for_target(target_host)
    if not found:
        known = ", ".join(_HOST_CODEGENS.keys()) or "none"
        raise NoImplementationError(
            f"no host codegen serves host target kind {kind!r} (registered host kinds: {known}); "
            "register one with tilelang.backend.register_host_codegen"
        )
    if len(found) > 1:
        names = ", ".join(cg.name for cg in found)
        raise AmbiguousImplementationError(
            f"host codegens {names} all accept host target {kind!r}; give them disjoint supports_target predicates"
        )
    return found[0]


def host_codegen_hooks_for(target: Target) -> list[HostCodegenHook]:
    """The hooks registered for device target `target`'s kind that accept it, in registration order."""
    return [hook for hook in _HOST_HOOKS.get(kind_of(target)) if hook.matches(target)]


def apply_host_codegen_hooks(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Run every matching hook of device target `target` over host module `mod`, in registration order."""
    for hook in host_codegen_hooks_for(target):
        mod = hook.lower(mod, target_host, target)
    return mod


STANDARD_HOST_CODEGENS = (
    HostCodegen("llvm", build=global_func_host_codegen("target.build.llvm")),
    HostCodegen("c", build=global_func_host_codegen("target.build.c")),
)
for _codegen in STANDARD_HOST_CODEGENS:
    register_host_codegen(_codegen.name, _codegen)
