"""The backend SDK: everything a backend distribution needs from core, in one versioned module.

A third-party backend imports from here (and from TileLang's public API: ``tilelang``, ``tilelang.language``,
``tilelang.testing``) only; names here keep their meaning within a major `SDK_VERSION`, and a minor version only
adds names. A backend states the version it was written for in its manifest (``Backend(sdk_version="1.0")``):
core refuses to load it, naming both versions, when it is older than that or of another major version.

What is here, by concern (imported on first use: ``import tilelang.backend.sdk`` imports nothing heavy):

- the manifest: `Backend`, `ToolStatus`, `hookimpl`;
- target kinds: `TargetKind`, `register_target_kind`, `split_targets`, `TargetPair`, `tvm_target`, `kind_of`;
- the pass pipeline's extension points: `PipelinePass`, `EXTENSION_POINTS`, `register_pass`, `register_lazy_passes`
  (passes as import paths: a lazy factory), `host_launch_pass`, the passes registered at a point (`passes_at`); core's
  target-neutral pipeline a backend's own runs (`lower_tile_program`) or its stages with their extension points
  (`CORE_STAGES`), run on one ``T.Kernel`` launch at a time (`each_launch`: a function of several launches); the
  threads a statement runs on in a warp-specialised block (`single_thread_var`, `thread_range`, `walk_ranges`: the
  slice of a branch on the thread index); pass configs in effect (`current_tl_config`, `current_tl_configs`); layout
  inference's result (`fragment_of`); the layouts ``T.annotate_layout`` attached (the allocation annotation
  `LAYOUT_ANN`, read back by `rebuild_layout`); shared-memory sizes (`dtype_bytes`); warp-role branches that
  shared-memory planning sees in order (`WARP_ROLES_ATTR`); dtype rewriting (`retype`;
  `Float8E4M3AsFn` / `e4m3_as_fn` for a backend whose ``float8_e4m3`` is the fn format);
- host-code kernels (core's launch lowering, `tilelang.transform.lower_launch_to_host`): `LowerLaunchToHost`,
  `emulate_threads`, `per_thread_buffers`, `stream_rows`;
- tile-op lowering: `TileOpImpl`, `TileOpContext` (what ``lower(ctx)`` receives), `register_tile_op_impl`,
  `register_lazy_tile_op_impls`, `ANY_TARGET`, the implementations registered for an op (`tile_op_impls_for`);
  core's helpers for them: `tileop_utils` (the module `tilelang.tileop.utils`: `nonunit_dims`, `region_indices`,
  `cast`, `dtype_of`, `guarded`), GEMM call sites
  (`gemm_operands`, `operand_index`), reductions (`identity_value`, `reduce_combine`, `nan_max`, `nan_min`,
  `nan_tests_by_bits`), atomics (`lower_atomic`), an intrinsic's lowering (`Lowered`, the user's spelling of
  an intrinsic: `dsl_name`, an element's offset: `linear_index`), `dtype_bits`, `buffer_info`;
- hand-written GEMM emitters: the warp-level matrix emitter a backend's ``mma`` / MFMA / WMMA / simdgroup emitter
  subclasses (`WarpMatrixEmitter`, an operand's tiles `OperandTiles`) and its emission helpers (`emit`,
  `collecting`, `alloc_registers`, `operand_region`, `is_fragment`);
- device builds: `DeviceCodegen`, `DeviceBuild`, `register_device_codegen`, `register_lazy_device_codegen`, the
  code of ``T.import_source`` a codegen that declares ``imports_source`` compiles (`IMPORT_SOURCE_ATTR`);
  host code: `HostCodegen`, `register_host_codegen`; C libraries for host-code backends: `c_library_codegen`,
  `c_compiler`, `SharedLibraryBackend`, `build_c_source` (TVM's C codegen, made to compile);
- execution: `ExecutionBackend`, `register_execution_backends`, `register_lazy_execution_backends`; the launch
  plan of device kernels: `LaunchPlan`, `build_launch_plan`, `KernelLaunch`, `LaunchExpr`, `format_launch_expr`,
  `launch_expr_refs`, and one call's launches (`bind_launch` -> `BoundLaunch`); core's runtime library
  (`runtime_library_path`, `load_runtime`, `runtime_libraries`) and a kernel library's loader (`load_module`);
  the reference's kernel adapters (`BaseKernelAdapter`, `CachedTextSource`, `LibraryGenerator`,
  `is_cuda_target`, `pythonic_expr`); a backend's own on-disk cache under ``TILELANG_CACHE_DIR`` (`DiskStore`,
  `write_atomic`, `enforce_limit`); the live device for the carver (`cuda_device_properties`,
  `cpu_parallel_units`);
- host toolchains: `get_cplus_compiler`, `get_msvc_subprocess_env`, `get_msvc_environment_error`;
- dialects (``T.<name>`` served by one backend and refused elsewhere): entry points of group
  ``tilelang.language`` (`DIALECT_GROUP`), see `tilelang.language.dialects`; a dialect module made of the common
  surface (`common_language_dialect`); the attribute ``T.use_swizzle`` sets (`SWIZZLE_ATTR`); for a dialect's
  functions: the kernel being parsed (`require_build_state`), shapes as the language takes them
  (`normalize_shape`), the argument checks of ``T.gemm_sp`` (`gemm_sp_args`), a GEMM's ``clear_accum`` known
  only at run time (`clear_flag`);
- errors a backend raises: `BackendError`, `ToolchainMissing`, `LoweringError`, `TargetError`.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

SDK_VERSION = "1.5"  # 1.1: each_launch; 1.2: the warp-level matrix emitter; 1.3: warp-role thread ranges;
# 1.4: WARP_ROLES_ATTR; IMPORT_SOURCE_ATTR and DeviceCodegen.imports_source (T.import_source); 1.5: clear_flag

# name -> the module that defines it
_EXPORTS = {
    **dict.fromkeys(("Backend", "ToolStatus"), "tilelang.backend.manifest"),
    "hookimpl": "tilelang.backend.hooks",
    **dict.fromkeys(("TargetKind", "TargetPair", "register_target_kind", "register_lazy_target_kind",
                     "split_targets", "tvm_target", "kind_of"), "tilelang.backend.target"),
    **dict.fromkeys(("PipelinePass", "EXTENSION_POINTS", "register_pass", "register_lazy_passes",
                     "host_launch_pass", "passes_at"), "tilelang.backend.passes"),
    **dict.fromkeys(("lower_tile_program", "CORE_STAGES"), "tilelang.transform.pipeline"),
    "each_launch": "tilelang.transform.launches",
    **dict.fromkeys(("thread_range", "walk_ranges", "single_thread_var"), "tilelang.transform.thread_range"),
    **dict.fromkeys(("current_tl_config", "current_tl_configs"), "tilelang.transform.config"),
    "fragment_of": "tilelang.transform.layout_inference",
    **dict.fromkeys(("dtype_bytes", "WARP_ROLES_ATTR"), "tilelang.transform.plan_shared_memory"),
    **dict.fromkeys(("retype", "Float8E4M3AsFn", "e4m3_as_fn"), "tilelang.transform.retype"),
    "LAYOUT_ANN": "tilelang.transform.apply_layouts",
    "rebuild_layout": ("tilelang.transform.apply_layouts", "rebuild"),
    **dict.fromkeys(("LowerLaunchToHost", "emulate_threads", "per_thread_buffers", "stream_rows"),
                    "tilelang.transform.lower_launch_to_host"),
    **dict.fromkeys(("TileOpImpl", "register_tile_op_impl", "register_lazy_tile_op_impls", "ANY_TARGET",
                     "tile_op_impls_for"), "tilelang.backend.tile_ops"),
    "TileOpContext": "tilelang.tileop.context",
    **dict.fromkeys(("gemm_operands", "operand_index"), "tilelang.tileop.gemm"),
    **dict.fromkeys(("identity_value", "nan_max", "nan_min", "nan_tests_by_bits"), "tilelang.tileop.reduce"),
    "reduce_combine": ("tilelang.tileop.reduce", "combine"),
    "lower_atomic": "tilelang.tileop.atomic",
    **dict.fromkeys(("Lowered", "dsl_name", "linear_index"), "tilelang.tileop.intrinsics"),
    **dict.fromkeys(("dtype_bits", "buffer_info"), "tilelang.layout.buffers"),
    **dict.fromkeys(("WarpMatrixEmitter", "OperandTiles", "collecting", "emit", "alloc_registers", "operand_region",
                     "is_fragment"), "tilelang.intrinsics.warp_matrix"),
    **dict.fromkeys(("DeviceCodegen", "DeviceBuild", "register_device_codegen", "register_lazy_device_codegen",
                     "IMPORT_SOURCE_ATTR"), "tilelang.backend.device_codegen"),
    **dict.fromkeys(("HostCodegen", "register_host_codegen", "register_lazy_host_codegen"),
                    "tilelang.backend.host_codegen"),
    **dict.fromkeys(("c_library_codegen", "c_compiler", "SharedLibraryBackend"), "tilelang.backend.c_library"),
    "build_c_source": ("tilelang.backend.c_source", "build"),
    **dict.fromkeys(("ExecutionBackend", "register_execution_backends", "register_lazy_execution_backends"),
                    "tilelang.backend.execution"),
    **dict.fromkeys(("LaunchPlan", "build_launch_plan", "KernelLaunch", "BoundLaunch"), "tilelang.engine.launch_plan"),
    "LaunchExpr": ("tilelang.engine.launch_plan", "Expr"),
    "format_launch_expr": ("tilelang.engine.launch_plan", "format_expr"),
    "launch_expr_refs": ("tilelang.engine.launch_plan", "expr_refs"),
    "bind_launch": ("tilelang.engine.launch_plan", "bind"),
    **dict.fromkeys(("runtime_library_path", "load_runtime", "runtime_libraries", "load_module"),
                    "tilelang.jit.runtime_loader"),
    **dict.fromkeys(("BaseKernelAdapter", "CachedTextSource"), "tilelang.jit.adapter.base"),
    "LibraryGenerator": "tilelang.jit.adapter.libgen",
    **dict.fromkeys(("is_cuda_target", "pythonic_expr"), "tilelang.jit.adapter.utils"),
    "DiskStore": "tilelang.cache.store",
    "write_atomic": "tilelang.cache.atomic",
    "enforce_limit": "tilelang.cache.usage",
    **dict.fromkeys(("cuda_device_properties", "cpu_parallel_units"), "tilelang.carver.arch.live"),
    "get_cplus_compiler": "tilelang.contrib.cc",
    **dict.fromkeys(("get_msvc_subprocess_env", "get_msvc_environment_error"), "tilelang.contrib.msvc"),
    "DIALECT_GROUP": ("tilelang.language.dialects", "GROUP"),
    "common_language_dialect": "tilelang.language.dialects",
    "SWIZZLE_ATTR": "tilelang.language.annotations",
    "require_build_state": ("tilelang.frontend.state", "require"),
    "normalize_shape": "tilelang.language.proxy",
    **dict.fromkeys(("gemm_sp_args", "clear_flag"), "tilelang.language.tileops"),
    **dict.fromkeys(("BackendError", "ToolchainMissing", "LoweringError", "TargetError"), "tilelang.errors"),
}
# name -> a helper module exported whole (its ``__all__`` is the SDK's promise)
_MODULES = {"tileop_utils": "tilelang.tileop.utils"}

__all__ = ["SDK_VERSION", "check_sdk_version", *_EXPORTS, *_MODULES]

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
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
        globals()[name] = value
        return value
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
