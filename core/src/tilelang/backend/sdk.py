"""The backend SDK: everything a backend distribution needs from core, in one versioned module.

A third-party backend imports from here (and from TileLang's public API: ``tilelang``, ``tilelang.language``,
``tilelang.testing``) only; names here keep their meaning within a major `SDK_VERSION`, and a minor version only
adds names. A backend states the version it was written for in its manifest (``Backend(sdk_version="1.0")``):
core refuses to load it, naming both versions, when it is older than that or of another major version.

What is here, by concern (imported on first use: ``import tilelang.backend.sdk`` imports nothing heavy):

- the manifest: `Backend`, `ToolStatus`, `hookimpl`;
- target kinds: `TargetKind`, `register_target_kind`, `split_targets`, `TargetPair`, `tvm_target`, `kind_of`;
- the pass pipeline's extension points: `PipelinePass`, `EXTENSION_POINTS`, `register_pass`,
  `register_lazy_passes` (passes as import paths: a lazy factory), `host_launch_pass`;
- tile-op lowering: `TileOpImpl`, `TileOpContext` (what ``lower(ctx)`` receives), `register_tile_op_impl`,
  `register_lazy_tile_op_impls`, `ANY_TARGET`;
- device builds: `DeviceCodegen`, `DeviceBuild`, `register_device_codegen`, `register_lazy_device_codegen`;
  host code: `HostCodegen`, `register_host_codegen`; C libraries for host-code backends: `c_library_codegen`,
  `c_compiler`, `SharedLibraryBackend`;
- execution: `ExecutionBackend`, `register_execution_backends`, `register_lazy_execution_backends`; the launch
  plan of device kernels: `LaunchPlan`, `build_launch_plan`;
- dialects (``T.<name>`` served by one backend and refused elsewhere): entry points of group
  ``tilelang.language`` (`DIALECT_GROUP`), see `tilelang.language.dialects`;
- errors a backend raises: `BackendError`, `ToolchainMissing`, `LoweringError`, `TargetError`.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

SDK_VERSION = "1.0"

# name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(("Backend", "ToolStatus"), "tilelang.backend.manifest"),
    "hookimpl": "tilelang.backend.hooks",
    **dict.fromkeys(("TargetKind", "TargetPair", "register_target_kind", "register_lazy_target_kind",
                     "split_targets", "tvm_target", "kind_of"), "tilelang.backend.target"),
    **dict.fromkeys(("PipelinePass", "EXTENSION_POINTS", "register_pass", "register_lazy_passes",
                     "host_launch_pass"), "tilelang.backend.passes"),
    **dict.fromkeys(("TileOpImpl", "register_tile_op_impl", "register_lazy_tile_op_impls", "ANY_TARGET"),
                    "tilelang.backend.tile_ops"),
    "TileOpContext": "tilelang.tileop.context",
    **dict.fromkeys(("DeviceCodegen", "DeviceBuild", "register_device_codegen", "register_lazy_device_codegen"),
                    "tilelang.backend.device_codegen"),
    **dict.fromkeys(("HostCodegen", "register_host_codegen", "register_lazy_host_codegen"),
                    "tilelang.backend.host_codegen"),
    **dict.fromkeys(("c_library_codegen", "c_compiler", "SharedLibraryBackend"), "tilelang.backend.c_library"),
    **dict.fromkeys(("ExecutionBackend", "register_execution_backends", "register_lazy_execution_backends"),
                    "tilelang.backend.execution"),
    **dict.fromkeys(("LaunchPlan", "build_launch_plan"), "tilelang.engine.launch_plan"),
    "DIALECT_GROUP": ("tilelang.language.dialects", "GROUP"),
    **dict.fromkeys(("BackendError", "ToolchainMissing", "LoweringError", "TargetError"), "tilelang.errors"),
}

__all__ = ["SDK_VERSION", "check_sdk_version", *_EXPORTS]

_VERSION = re.compile(r"^(\d+)\.(\d+)$")


def _parse(version: str, what: str) -> tuple[int, int]:
    found = _VERSION.match(version) if isinstance(version, str) else None
    if found is None:
        raise ValueError(f"{what} must be 'MAJOR.MINOR' (e.g. {SDK_VERSION!r}), got {version!r}")
    return int(found.group(1)), int(found.group(2))


def check_sdk_version(required: str, backend: str = "this backend") -> None:
    """Raise `tilelang.errors.BackendLoadError` when core's SDK cannot serve a backend written for `required`: an
    older minor version (names it uses may be missing) or another major version (names changed meaning)."""
    from tilelang.errors import BackendLoadError

    want, have = _parse(required, "sdk_version"), _parse(SDK_VERSION, "SDK_VERSION")
    if want[0] != have[0] or want[1] > have[1]:
        advice = ("upgrade tilelang-core" if want > have
                  else f"install a release of {backend} written for backend SDK {have[0]}.x")
        raise BackendLoadError(f"backend {backend!r} needs TileLang backend SDK {required}; the installed "
                               f"tilelang-core provides SDK {SDK_VERSION}: {advice}")


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    if where is None:
        raise AttributeError(f"module 'tilelang.backend.sdk' has no attribute {name!r} (the SDK's names: "
                             "tilelang.backend.sdk.__all__)")
    module, attr = where if isinstance(where, tuple) else (where, name)
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
