"""Execution backends for WebGPU, in preference order: ``wgpu`` (wgpu-py).

``load(artifact)`` reads the kernel's launch plan (`tilelang_webgpu.plan`), compiles one compute pipeline per
WGSL shader (cached per process; invalid WGSL raises `WGSLValidationError` quoting the line) and returns a
`WgpuLauncher`: ``launcher(*tensors_and_scalars)`` in parameter order, with torch CPU tensors that are copied
to the device and written back in place, and ``launcher.time_ms(*args)`` for GPU time (timestamp queries).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable

__all__ = ["WgpuBackend", "EXECUTION_BACKENDS"]


class WgpuBackend(ExecutionBackend):
    """Dispatches WGSL compute shaders through wgpu-py; tensors are copied in and out of GPU buffers."""

    name = "wgpu"
    reference_names = ("tvm_ffi",)
    description = "wgpu-py (Vulkan, Metal, D3D12 or GL; Mesa llvmpipe/lavapipe on CPU-only machines)"
    torch_device_type = "cpu"  # the launcher takes torch CPU tensors and copies them to the device
    launcher_checks_arguments = False  # let the JIT check dtype, shape and contiguity
    default_alignment = 1  # tensors are copied, never aliased: any alignment works

    def argument_alignment(self, artifact: Any) -> list[int]:
        """1 for every parameter: tensors are copied into GPU buffers, so a host pointer's alignment never
        matters (the WGSL's vector views assume the alignment of those buffers, not of the tensor)."""
        return [1] * len(artifact.params)

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("wgpu") is None:
            return "the wgpu package is not installed (pip install wgpu)"
        try:
            from tilelang_webgpu.adapter import device

            device()
        except Exception as exc:
            return f"no wgpu device: {exc}"
        return None

    def load(self, artifact: Any) -> Any:
        """A `WgpuLauncher` for `artifact` (a WebGPU `CompiledArtifact`)."""
        reason = self.unavailable_reason()
        if reason is not None:
            raise ExecutionBackendUnavailable(f"{self.name}: {reason}")
        from tilelang_webgpu.launch import WgpuLauncher
        from tilelang_webgpu.plan import plan_for

        return WgpuLauncher(plan_for(artifact), list(artifact.params))

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """The launch plan as JSON: what reloads this kernel from the cache without TVM."""
        from tilelang_webgpu.plan import PLAN_FILE, plan_for

        return {PLAN_FILE: plan_for(artifact).to_json().encode()}


EXECUTION_BACKENDS = [WgpuBackend()]
