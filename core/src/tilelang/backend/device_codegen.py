"""Device codegen: how the device half of a lowered module becomes source and a runtime module.

Registered per target kind; several codegens may share a kind (e.g. two vendors' CUDA backends) and are told
apart by ``supports_target`` predicates and, between equally matching ones, by ``priority``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.backend._registry import Registry, accepts
from tilelang.backend.host_codegen import TargetPredicate
from tilelang.backend.select import select_one
from tilelang.backend.target import kind_of

DeviceCodegenFunc = Callable[[Any, Any], Any]

__all__ = ["DeviceCodegen", "DeviceCodegenFunc", "register_device_codegen", "register_lazy_device_codegen",
           "device_codegens_for", "resolve_device_codegen"]


@dataclass(frozen=True, slots=True)
class DeviceCodegen:
    """Builds a target's device module: ``build(mod, target) -> runtime module`` (source inspectable)."""

    name: str
    build: DeviceCodegenFunc | None = None
    supports_target: TargetPredicate | None = None
    priority: int = 0
    build_without_compile: DeviceCodegenFunc | None = None  # source only (no device binary), when supported

    def matches(self, target: Any) -> bool:
        """Whether this codegen serves `target` (always, without a predicate)."""
        return accepts(self.supports_target, target)

    def lower(self, mod: Any, target: Any, *, compile_device: bool = True) -> Any:
        """Build device module `mod` for `target` (`build_without_compile` when ``compile_device=False``)."""
        build = self.build if compile_device else (self.build_without_compile or self.build)
        if build is None:
            mode = "with compilation" if compile_device else "without compilation"
            raise ValueError(f"Device codegen {self.name!r} for target {kind_of(target)!r} does not support "
                             f"lowering {mode}")
        return build(mod, target)


_DEVICE_CODEGENS: Registry[DeviceCodegen] = Registry("device codegen", DeviceCodegen)


def register_device_codegen(target_kind: str, codegen: DeviceCodegen, *, override: bool = False) -> DeviceCodegen:
    """Register `codegen` for device target kind `target_kind`."""
    return _DEVICE_CODEGENS.register(target_kind, codegen, override=override)


def register_lazy_device_codegen(target_kind: str, import_path: str) -> None:
    """Register the DeviceCodegen at ``"module:attr"``, imported when `target_kind` is first resolved."""
    _DEVICE_CODEGENS.register_lazy(target_kind, import_path)


def device_codegens_for(target: Any) -> list[DeviceCodegen]:
    """The codegens registered for `target`'s kind that accept it, in registration order."""
    return [cg for cg in _DEVICE_CODEGENS.get(kind_of(target)) if cg.matches(target)]


def resolve_device_codegen(target: Any) -> DeviceCodegen:
    """The highest-priority matching device codegen; none, or a tie at the top, is an error."""
    kind = kind_of(target)
    return select_one(device_codegens_for(target), what="device codegen", request=f"target kind {kind!r}",
                      owners=_DEVICE_CODEGENS.owners(kind), registered=_DEVICE_CODEGENS.get(kind), kind=kind)
