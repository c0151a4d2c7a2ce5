"""Execution backends for Metal, in preference order: torch MPS first, then a direct Metal path.

Both run the artifact's MSL by its launch plan (`tilelang_metal.launch`): each device kernel in turn, its
tensors at ``[[buffer(0..n-1)]]`` in the plan's order, the packed scalar struct at ``[[buffer(n)]]``, and
``grid`` threadgroups of ``threads`` threads (core's plan bound to the call: `tilelang.engine.launch_plan.bind`).

* ``torch``: ``torch.mps.compile_shader`` once per kernel, dispatched on the caller's MPS tensors (torch's
  ``threads=`` is the total thread count per dimension, ``group_size=`` the threadgroup size; the scalar
  struct travels as a small uint8 MPS tensor bound as the constant buffer).
* ``metal``: the Metal framework through PyObjC on CPU torch tensors, copied into shared-storage buffers and
  back after the command buffer completes.
"""

from __future__ import annotations

import sys
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable, TileLangError
from tilelang_metal.launch import PLAN_FILE, LaunchPlan, MetalLaunchError, bind_arguments, plan_for


def _mps_reason() -> str | None:
    if sys.platform != "darwin":
        return f"running Metal kernels needs macOS with MPS (this is {sys.platform}); compiling to MSL works here"
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.backends.mps.is_available():
        return "torch reports no MPS device"
    if not hasattr(torch.mps, "compile_shader"):
        return f"torch {torch.__version__} has no torch.mps.compile_shader (needs torch >= 2.6)"
    return None


def _metal_reason() -> str | None:
    if sys.platform != "darwin":
        return f"running Metal kernels needs macOS with MPS (this is {sys.platform}); compiling to MSL works here"
    try:
        import torch  # noqa: F401  (tensors in and out)
    except ImportError:
        return "torch is not installed"
    try:
        import Metal
    except ImportError:
        return "PyObjC's Metal bindings are not installed (pip install pyobjc-framework-Metal)"
    if Metal.MTLCreateSystemDefaultDevice() is None:
        return "the Metal framework reports no device"
    return None


def _check_threads(plan: LaunchPlan, step_name: str, threads: tuple[int, int, int], limit: int) -> None:
    total = threads[0] * threads[1] * threads[2]
    if total > limit:
        raise MetalLaunchError(f"{plan.name}: kernel {step_name!r} needs {total} threads per threadgroup, the "
                               f"device allows {limit}")


class _TorchMPSLauncher:
    def __init__(self, artifact: Any):
        import torch

        self.plan = plan_for(artifact)
        self.params = artifact.params
        try:
            self.library = torch.mps.compile_shader(self.plan.source)
        except Exception as exc:
            raise TileLangError(f"{self.plan.name}: the Metal compiler rejected the MSL: {exc}") from None
        self.functions = [getattr(self.library, step.name) for step in self.plan.steps]

    def __call__(self, *args: Any) -> None:
        import torch

        bound = bind_arguments(self.plan, self.params, args)
        for p, a in zip(self.params, args):
            if p.is_tensor:
                if not isinstance(a, torch.Tensor) or a.device.type != "mps":
                    raise MetalLaunchError(f"{self.plan.name}: {p.name} must be a torch tensor on 'mps'")
                if not a.is_contiguous():
                    raise MetalLaunchError(f"{self.plan.name}: {p.name} must be contiguous")
        for step, fn, launch in zip(self.plan.steps, self.functions, bound):
            grid, threads = step.dims(launch)
            if 0 in grid:
                continue
            limit = int(getattr(fn, "max_threads_per_threadgroup", 1024))
            _check_threads(self.plan, step.name, threads, limit)
            bound = [args[i] for i in step.buffers]
            if step.pods:
                pod = torch.frombuffer(bytearray(step.pack(launch)), dtype=torch.uint8)
                bound.append(pod.to("mps"))
            fn(*bound, threads=[g * t for g, t in zip(grid, threads)], group_size=list(threads))


class _MetalDirectLauncher:
    def __init__(self, artifact: Any):
        import Metal

        self.Metal = Metal
        self.plan = plan_for(artifact)
        self.params = artifact.params
        self.device = Metal.MTLCreateSystemDefaultDevice()
        library, error = self.device.newLibraryWithSource_options_error_(self.plan.source, None, None)
        if library is None:
            raise TileLangError(f"{self.plan.name}: the Metal compiler rejected the MSL: {error}")
        self.pipelines = []
        for step in self.plan.steps:
            function = library.newFunctionWithName_(step.name)
            if function is None:
                raise TileLangError(f"{self.plan.name}: the MSL library has no kernel {step.name!r}")
            pipeline, error = self.device.newComputePipelineStateWithFunction_error_(function, None)
            if pipeline is None:
                raise TileLangError(f"{self.plan.name}: cannot build a pipeline for {step.name!r}: {error}")
            self.pipelines.append(pipeline)
        self.queue = self.device.newCommandQueue()

    def _buffer(self, data: bytes) -> Any:
        Metal = self.Metal
        return self.device.newBufferWithBytes_length_options_(data or b"\0", max(1, len(data)),
                                                             Metal.MTLResourceStorageModeShared)

    def __call__(self, *args: Any) -> None:
        import torch

        Metal = self.Metal
        bound = bind_arguments(self.plan, self.params, args)
        buffers: dict[int, tuple[Any, Any, int]] = {}  # param index -> (MTLBuffer, host tensor, bytes)
        for index, (p, a) in enumerate(zip(self.params, args)):
            if not p.is_tensor:
                continue
            if not isinstance(a, torch.Tensor):
                raise MetalLaunchError(f"{self.plan.name}: {p.name} must be a torch tensor")
            host = a.detach().to("cpu").contiguous()
            raw = host.reshape(-1).view(torch.uint8).numpy().tobytes() if host.numel() else b""
            buffers[index] = (self._buffer(raw), host, len(raw))
        command = self.queue.commandBuffer()
        encoder = command.computeCommandEncoder()
        for step, pipeline, launch in zip(self.plan.steps, self.pipelines, bound):
            grid, threads = step.dims(launch)
            if 0 in grid:
                continue
            _check_threads(self.plan, step.name, threads, int(pipeline.maxTotalThreadsPerThreadgroup()))
            encoder.setComputePipelineState_(pipeline)
            for slot, index in enumerate(step.buffers):
                encoder.setBuffer_offset_atIndex_(buffers[index][0], 0, slot)
            if step.pods:
                data = step.pack(launch)
                encoder.setBytes_length_atIndex_(data, len(data), step.pod_slot)
            encoder.dispatchThreadgroups_threadsPerThreadgroup_(Metal.MTLSizeMake(*grid), Metal.MTLSizeMake(*threads))
        encoder.endEncoding()
        command.commit()
        command.waitUntilCompleted()
        if command.error() is not None:
            raise TileLangError(f"{self.plan.name}: the Metal command buffer failed: {command.error()}")
        for index, (buffer, host, size) in buffers.items():
            if size == 0:
                continue
            raw = bytes(buffer.contents().as_buffer(size))
            result = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(host.dtype).reshape(host.shape)
            args[index].copy_(result)


class TorchMPSBackend(ExecutionBackend):
    """Runs MSL through ``torch.mps.compile_shader`` on torch MPS tensors."""

    name = "torch"
    description = "torch.mps.compile_shader on MPS tensors"

    def unavailable_reason(self) -> str | None:
        return _mps_reason()

    def load(self, artifact: Any) -> Any:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ExecutionBackendUnavailable(f"{self.name}: {reason}")
        return _TorchMPSLauncher(artifact)

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """The launch plan, so a cached kernel runs without TVM."""
        return {PLAN_FILE: plan_for(artifact).to_json().encode()}


class MetalDirectBackend(ExecutionBackend):
    """Runs MSL through the Metal framework directly (no torch MPS kernels involved)."""

    name = "metal"
    reference_names = ("tvm_ffi",)
    description = "the Metal framework through PyObjC"

    def unavailable_reason(self) -> str | None:
        return _metal_reason()

    def load(self, artifact: Any) -> Any:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ExecutionBackendUnavailable(f"{self.name}: {reason}")
        return _MetalDirectLauncher(artifact)

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """The launch plan, so a cached kernel runs without TVM."""
        return {PLAN_FILE: plan_for(artifact).to_json().encode()}


EXECUTION_BACKENDS = [TorchMPSBackend(), MetalDirectBackend()]
