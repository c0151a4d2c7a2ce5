"""Backend registries and the plugin contract.

Everything a backend plugin touches lives here: the `Backend` manifest its entry point names, one registry per
concern (targets, pass extension points, device codegen, host codegen, execution backends, tile-operator
implementations), each with an eager ``register_*`` and a lazy ``register_lazy_*`` (import path) form, and the
pluggy hooks (`hookimpl`, specs in `tilelang.backend.hookspecs`). See docs/writing_a_backend.md.
"""

from tilelang.backend.device_codegen import (
    DeviceBuild,
    DeviceCodegen,
    device_codegens_for,
    register_device_codegen,
    register_lazy_device_codegen,
    resolve_device_codegen,
)
from tilelang.backend.execution import (
    ExecutionBackend,
    execution_backends_for,
    register_execution_backends,
    register_lazy_execution_backends,
    resolve_execution_backend,
)
from tilelang.backend.execution_backend import ExecutionBackendSpec
from tilelang.backend.hooks import hookimpl, plugin_manager
from tilelang.backend.host_codegen import (
    HostCodegen,
    HostCodegenFunc,
    HostCodegenHook,
    HostCodegenHookFunc,
    TargetPredicate,
    allowed_host_codegens_for_target,
    apply_host_codegen_hooks,
    global_func_host_codegen,
    register_host_codegen,
    register_host_codegen_hook,
    register_lazy_host_codegen,
    register_lazy_host_codegen_hooks,
    resolve_host_codegen,
)
from tilelang.backend.manifest import Backend, ToolStatus
from tilelang.backend.module import (
    BackendContext,
    BackendModule,
    create_backend_context,
    get_backend,
    list_backends,
    register_backend,
)
from tilelang.backend.pass_pipeline import PassPipeline
from tilelang.backend.passes import (
    EXTENSION_POINTS,
    PipelinePass,
    host_launch_pass,
    passes_at,
    register_lazy_passes,
    register_pass,
)
from tilelang.backend.plugins import BackendLoadWarning
from tilelang.backend.target import (
    TargetKind,
    TargetPair,
    auto_detect_target,
    determine_target,
    kind_of,
    list_target_detectors,
    normalize_target,
    register_lazy_target_kind,
    register_target_detector,
    register_target_kind,
    register_target_normalizer,
    split_targets,
)
from tilelang.backend.tile_ops import (
    ANY_TARGET,
    TileOpImpl,
    register_lazy_tile_op_impls,
    register_tile_op_impl,
    resolve_tile_op_impl,
    tile_op_impls_for,
)

__all__ = [
    "BackendContext", "BackendModule", "ExecutionBackendSpec", "PassPipeline", "auto_detect_target",
    "create_backend_context", "get_backend", "list_backends", "list_target_detectors", "register_backend",
    "register_target_detector", "register_target_normalizer",
    "ANY_TARGET", "Backend", "BackendLoadWarning", "DeviceBuild", "DeviceCodegen", "EXTENSION_POINTS",
    "ExecutionBackend",
    "HostCodegen", "HostCodegenFunc", "HostCodegenHook", "HostCodegenHookFunc", "PipelinePass", "TargetKind",
    "TargetPredicate", "TileOpImpl", "ToolStatus", "allowed_host_codegens_for_target", "apply_host_codegen_hooks",
    "determine_target", "split_targets", "TargetPair", "device_codegens_for", "execution_backends_for",
    "global_func_host_codegen", "hookimpl",
    "host_launch_pass",
    "kind_of", "normalize_target", "passes_at", "plugin_manager", "register_device_codegen",
    "register_execution_backends", "register_host_codegen", "register_host_codegen_hook",
    "register_lazy_device_codegen", "register_lazy_execution_backends", "register_lazy_host_codegen",
    "register_lazy_host_codegen_hooks", "register_lazy_passes", "register_lazy_target_kind",
    "register_lazy_tile_op_impls", "register_pass", "register_target_kind", "register_tile_op_impl",
    "resolve_device_codegen", "resolve_execution_backend", "resolve_host_codegen", "resolve_tile_op_impl",
    "tile_op_impls_for",
]
