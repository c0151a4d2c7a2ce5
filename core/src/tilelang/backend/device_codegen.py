"""Device codegen: how the device half of a lowered module becomes source, a runtime module and binaries.

Registered per target kind; several codegens may share a kind (e.g. two vendors' CUDA backends) and are told
apart by ``supports_target`` predicates and, between equally matching ones, by ``priority``.

The contract, in the order `tilelang.lower` runs it:

1. ``build(mod, target)`` (``build_without_compile`` for ``enable_device_compile=False``) returns the runtime
   module, or a `DeviceBuild` carrying it with the binaries (``files``), launch facts (``metadata``) and the
   source to show (``source``) the build produced on the way (ROCm: the linked hsaco, its assembly and register
   usage);
2. ``postprocess(source, target)`` rewrites the kernel source the target needs rewritten (CUDA: the intrinsics
   header; WebGPU: atomics) before the cross-cutting ``tilelang_postprocess_kernel_source`` hooks and the
   user's ``tilelang_callback_*_postproc`` callback see it;
3. ``finalize(source, target)`` builds what comes from the final source (CUDA: nvcc/NVRTC to cubin and PTX) and
   returns it as a `DeviceBuild` whose files and metadata join the artifact's (run when device code is compiled).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilelang.backend._registry import Registry, accepts
from tilelang.backend.host_codegen import TargetPredicate
from tilelang.backend.select import select_one
from tilelang.backend.target import kind_of

DeviceCodegenFunc = Callable[[Any, Any], Any]
SourceFunc = Callable[[str, Any], str]

IMPORT_SOURCE_ATTR = "tl.import_source"  # IRModule / PrimFunc attribute: the code T.import_source gave, in order

__all__ = ["IMPORT_SOURCE_ATTR", "DeviceBuild", "DeviceCodegen", "DeviceCodegenFunc", "register_device_codegen",
           "register_lazy_device_codegen", "device_codegens_for", "resolve_device_codegen"]


@dataclass(slots=True)
class DeviceBuild:
    """What a device codegen built: the runtime module, named binary products (``{"kernel.cubin": b"..."}``, kept
    in the artifact and the kernel cache), JSON-able launch facts, and the kernel source to show when it is not
    the runtime module's own (None: `tilelang.lower` inspects ``rt_mod``)."""

    rt_mod: Any = None
    files: dict[str, bytes] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str | None = None

    def merge(self, other: DeviceBuild) -> None:
        """Take `other`'s files and metadata (a `finalize` result) into this build."""
        self.files.update(other.files)
        self.metadata.update(other.metadata)


@dataclass(frozen=True, slots=True)
class DeviceCodegen:
    """Builds a target's device module: ``build(mod, target) -> runtime module | DeviceBuild`` (the module's
    source inspectable), with the optional ``postprocess`` and ``finalize`` steps (see the module doc)."""

    name: str
    build: DeviceCodegenFunc | None = None
    supports_target: TargetPredicate | None = None
    priority: int = 0
    build_without_compile: DeviceCodegenFunc | None = None  # source only (no device binary), when supported
    postprocess: SourceFunc | None = None  # (source, target) -> the source this target runs
    finalize: Callable[[str, Any], DeviceBuild] | None = None  # (final source, target) -> binaries and metadata
    # whether `build` compiles the code of ``T.import_source`` with the kernels (the device module's attribute
    # `IMPORT_SOURCE_ATTR`); a program importing source for a codegen that does not is refused, not run without it
    imports_source: bool = False

    def matches(self, target: Any) -> bool:
        """Whether this codegen serves `target` (always, without a predicate)."""
        return accepts(self.supports_target, target)

    def build_device(self, mod: Any, target: Any, *, compile_device: bool = True) -> DeviceBuild:
        """Build device module `mod` for `target` (`build_without_compile` when ``compile_device=False``)."""
        build = self.build if compile_device else (self.build_without_compile or self.build)
        if build is None:
            mode = "with compilation" if compile_device else "without compilation"
            raise ValueError(f"Device codegen {self.name!r} for target {kind_of(target)!r} does not support "
                             f"lowering {mode}")
        built = build(mod, target)
        return built if isinstance(built, DeviceBuild) else DeviceBuild(rt_mod=built)

    def lower(self, mod: Any, target: Any, *, compile_device: bool = True) -> Any:
        """The runtime module of `build_device` (for callers that need only the module)."""
        return self.build_device(mod, target, compile_device=compile_device).rt_mod


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
