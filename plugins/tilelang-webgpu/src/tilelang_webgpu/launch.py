"""Running a launch plan: pipelines (cached per WGSL), argument binding, dispatch, read-back, GPU timing.

A call ``launcher(*args)`` takes the kernel's parameters in order (torch CPU tensors and Python scalars):

1. core's launch plan is bound to the arguments (`tilelang.engine.launch_plan.bind`): each step's grid and
   ``PODArgs`` scalars, computed from the scalar arguments and the tensors' shapes;
2. every tensor a shader binds is copied into its pooled storage buffer;
3. per step: ``PODArgs`` is packed (scalars in field order, then ``packGridDimX``), the grid is evaluated
   (a blockIdx.x extent past the per-dimension limit is spread over z as TVM's runtime does) and one compute
   pass dispatches it; all steps share one command encoder, followed by copies of the written buffers into
   staging buffers, then a single submit;
4. the staging buffers are mapped and copied back into the caller's tensors, so in-place semantics hold;
5. a kernel that prints or asserts also binds a zeroed debug log, read back and reported after the call
   (`tilelang_webgpu.passes.debug_log.report`: the records on stdout, a failed assertion raised).

`time_ms` runs the same with timestamp queries around the passes (GPU time, transfers excluded).
"""

from __future__ import annotations

import hashlib
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

from tilelang.backend.sdk import BoundLaunch, bind_launch, format_launch_expr, launch_expr_refs
from tilelang.errors import ExecutionBackendUnavailable, KernelArgumentError
from tilelang_webgpu.adapter import adapter_summary, device, has_feature, timestamp_period_ns
from tilelang_webgpu.buffers import BufferPool
from tilelang_webgpu.packed_f16 import for_device
from tilelang_webgpu.plan import DEBUG_LOG, KernelStep, LaunchPlan
from tilelang_webgpu.subgroups import for_naga, uses_subgroups
from tilelang_webgpu.wgsl import ShaderInterface, WGSLValidationError, validation_error

__all__ = ["WgpuLauncher", "compile_pipeline"]

_PIPELINES: dict[str, tuple[Any, Any]] = {}
_PIPELINE_LOCK = threading.Lock()


def compile_pipeline(wgsl: str, iface: ShaderInterface, kernel: str) -> tuple[Any, Any]:
    """``(compute pipeline, bind group layout)`` for one shader, cached per process by its WGSL's hash.

    Raises `WGSLValidationError` (naga's message and the offending line) when the WGSL is rejected.
    """
    if uses_subgroups(wgsl) and not has_feature("subgroup"):
        raise ExecutionBackendUnavailable(
            f"kernel {kernel!r} was compiled with subgroups (target attribute supports_subgroups) but the wgpu "
            f"adapter ({adapter_summary()}) lacks the 'subgroup' feature; compile it without supports_subgroups")
    key = hashlib.sha256(f"{iface.entry}\0{wgsl}".encode()).hexdigest()
    with _PIPELINE_LOCK:
        hit = _PIPELINES.get(key)
        if hit is not None:
            return hit
        import wgpu

        dev = device()
        _check_limits(iface, kernel)
        if uses_subgroups(wgsl):
            wgsl = for_naga(wgsl)
        try:
            module = dev.create_shader_module(code=wgsl, label=kernel)
        except wgpu.GPUError as exc:
            raise validation_error(exc, wgsl, kernel) from None
        access = {"read": "read-only-storage", "read_write": "storage"}
        entries = [{"binding": b.index, "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": access.get(b.access, "storage") if b.kind == "storage" else "uniform"}}
                   for b in iface.bindings]
        layout = dev.create_bind_group_layout(entries=entries)
        try:
            pipeline = dev.create_compute_pipeline(
                layout=dev.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": module, "entry_point": iface.entry}, label=kernel)
        except wgpu.GPUError as exc:
            raise validation_error(exc, wgsl, kernel) from None
        _PIPELINES[key] = (pipeline, layout)
        return pipeline, layout


def _check_limits(iface: ShaderInterface, kernel: str) -> None:
    x, y, z = iface.workgroup_size
    most = device().limits["max-compute-invocations-per-workgroup"]
    if x * y * z > most:
        raise WGSLValidationError(f"kernel {kernel!r} uses {x * y * z} threads per block ({x}x{y}x{z}); "
                                  f"this WebGPU device allows at most {most}")


@dataclass
class _Step:
    plan: KernelStep
    iface: ShaderInterface
    pipeline: Any
    layout: Any
    uniform: Any
    written: tuple[int, ...]  # parameter indices bound read_write
    wgsl: str = ""  # the shader as compiled for this device
    bind_group: Any = None
    bind_generation: int = -1


class WgpuLauncher:
    """Runs one compiled kernel: ``launcher(*args)``; ``launcher.time_ms(*args)`` for GPU time.

    Attributes: `plan` (the `LaunchPlan`), `params` (the kernel's `ParamInfo`s), `uses_timestamps` (whether
    `time_ms` measures with GPU timestamp queries rather than wall-clock time around the dispatches), `shaders`.
    """

    def __init__(self, plan: LaunchPlan, params: list[Any]):
        import wgpu

        self.plan = plan
        self.params = list(params)
        self._dev = device()
        self._queue = self._dev.queue
        self._pool = BufferPool(self._dev)
        self._lock = threading.Lock()
        self._max_groups = int(self._dev.limits["max-compute-workgroups-per-dimension"])
        self._steps = [self._prepare(step, wgpu) for step in plan.steps]
        self._tensors = sorted({i for s in plan.steps for i in s.buffers})
        self._written = sorted({i for s in self._steps for i in s.written})
        self.uses_timestamps = has_feature("timestamp-query")
        self._tick_ns = timestamp_period_ns() if self.uses_timestamps else 1.0
        self._query = None
        self._fence = None

    # ------------------------------------------------------------------------------------------ setup
    def _prepare(self, step: KernelStep, wgpu: Any) -> _Step:
        wgsl = for_device(step.wgsl, has_feature("shader-f16"))  # f16 packed into u32 words without the feature
        iface = ShaderInterface.parse(wgsl)
        pipeline, layout = compile_pipeline(wgsl, iface, step.name)
        if len(iface.storage) != len(step.buffers):
            raise ExecutionBackendUnavailable(
                f"wgpu: kernel {step.name!r} declares {len(iface.storage)} storage buffers, its IR passes "
                f"{len(step.buffers)}")
        if len(iface.pod_fields) != len(step.pods) + 1:
            raise ExecutionBackendUnavailable(
                f"wgpu: kernel {step.name!r}: PODArgs has fields {[f for f, _ in iface.pod_fields]}, its IR "
                f"passes {list(step.pods)} + packGridDimX")
        if step.grid[2] != 1:
            extent = format_launch_expr(step.grid[2], self.plan.launch.param_names)
            raise ExecutionBackendUnavailable(
                f"wgpu: kernel {step.name!r} uses blockIdx.z (extent {extent}); TVM's WebGPU code reserves "
                "it to extend blockIdx.x: use a 2-D grid")
        unbound = sorted({str(r[1]) for e in (*step.pods, *step.grid) for r in launch_expr_refs(e)
                          if r[0] in ("unbound", "unsupported")})
        if unbound:
            raise ExecutionBackendUnavailable(
                f"wgpu: kernel {step.name!r} needs {', '.join(unbound)}, which is neither a scalar parameter "
                "nor a symbolic dimension of a tensor parameter")
        written = tuple(i for i, b in zip(step.buffers, iface.storage) if b.access != "read")
        uniform = self._dev.create_buffer(size=len(iface.pack_pods([0] * len(iface.pod_fields))),
                                          usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST,
                                          label=f"{step.name}.podArgs")
        return _Step(step, iface, pipeline, layout, uniform, written, wgsl)

    @property
    def shaders(self) -> list[str]:
        """The WGSL of each step as compiled for this device (f16 packed into u32 where it lacks shader-f16)."""
        return [step.wgsl for step in self._steps]

    # ------------------------------------------------------------------------------------------ calls
    def __call__(self, *args: Any) -> None:
        with self._lock:
            self._run(args, timed=False)

    def time_ms(self, *args: Any, warmup: int = 1, rep: int = 5) -> float:
        """Median time of the kernel's dispatches over `rep` calls (after `warmup`), in milliseconds.

        With the ``timestamp-query`` feature this is GPU time between the first pass's start and the last
        pass's end; without it, wall-clock time of the submission (uploads and read-back excluded).
        """
        with self._lock:
            for _ in range(warmup):
                self._run(args, timed=True)
            return statistics.median(self._run(args, timed=True) for _ in range(max(1, rep)))

    def _bind(self, args: tuple[Any, ...]) -> list[BoundLaunch]:
        if len(args) != len(self.params):
            names = ", ".join(p.name for p in self.params)
            raise KernelArgumentError(f"kernel {self.plan.name!r} takes {len(self.params)} arguments ({names}), "
                                      f"got {len(args)}")
        try:
            return bind_launch(self.plan.launch, args)
        except KernelArgumentError as exc:
            raise type(exc)(f"kernel {self.plan.name!r}: {exc}") from None

    def _grid(self, step: _Step, bound: BoundLaunch) -> tuple[int, int, int, int]:
        gx, gy, _ = bound.grid
        if gy > self._max_groups:
            raise KernelArgumentError(f"kernel {step.plan.name!r}: blockIdx.y extent {gy} exceeds this device's "
                                      f"limit of {self._max_groups} workgroups per dimension")
        x, z = gx, 1
        while x > self._max_groups:  # spread blockIdx.x over z, as TVM's web runtime does
            x, z = (x + 1) // 2, z * 2
        pack = gx - 1 if step.iface.guard_inclusive else gx  # the shader returns when its block index > pack
        return x, gy, z, pack

    def _bind_group(self, step: _Step) -> Any:
        if step.bind_group is None or step.bind_generation != self._pool.generation:
            entries = [{"binding": b.index, "resource": {"buffer": self._pool.buffer(i)}}
                       for i, b in zip(step.plan.buffers, step.iface.storage)]
            uniform = step.iface.uniform
            if uniform is not None:
                entries.append({"binding": uniform.index, "resource": {"buffer": step.uniform}})
            step.bind_group = self._dev.create_bind_group(layout=step.layout, entries=entries)
            step.bind_generation = self._pool.generation
        return step.bind_group

    def _tensor_args(self, args: tuple[Any, ...]) -> dict[int, Any]:
        """Parameter index -> tensor for every bound buffer (the debug log: a fresh zeroed one)."""
        values = {i: args[i] for i in self._tensors if i != DEBUG_LOG}
        if self.plan.uses_debug_log:
            import torch

            from tilelang_webgpu.passes.debug_log import LOG_WORDS

            values[DEBUG_LOG] = torch.zeros(LOG_WORDS, dtype=torch.int32)
        return values

    def _param_name(self, index: int) -> str:
        return "<debug log>" if index == DEBUG_LOG else self.params[index].name

    def _report(self, values: dict[int, Any]) -> None:
        log = values.get(DEBUG_LOG)
        if log is not None:
            from tilelang_webgpu.passes.debug_log import report

            report(log.numpy().view("uint32"), self.plan.debug, self.plan.name)

    def _run(self, args: tuple[Any, ...], timed: bool) -> float:
        bound = self._bind(args)
        tensors = self._tensor_args(args)
        for i in self._tensors:
            self._pool.upload(i, tensors[i], self._param_name(i))
        encoder = self._dev.create_command_encoder()
        launches = []
        for step, launch in zip(self._steps, bound):
            x, y, z, pack = self._grid(step, launch)
            if x * y * z == 0:
                continue
            values = [v for p, v in zip(launch.kernel.params, launch.args) if not p.is_pointer] + [pack]
            try:
                self._queue.write_buffer(step.uniform, 0, step.iface.pack_pods(values))
            except Exception as exc:  # struct.error: a scalar that does not fit its WGSL type
                raise KernelArgumentError(f"kernel {self.plan.name!r}: scalar arguments {values[:-1]} do not fit "
                                          f"{[t for _, t in step.iface.pod_fields[:-1]]}: {exc}") from None
            launches.append((step, self._bind_group(step), (x, y, z)))
        stamps = self._query_set() if timed and self.uses_timestamps and launches else None
        for n, (step, group, dims) in enumerate(launches):
            writes = None
            if stamps is not None:
                writes = {"query_set": stamps[0]}
                if n == 0:
                    writes["beginning_of_pass_write_index"] = 0
                if n == len(launches) - 1:
                    writes["end_of_pass_write_index"] = 1
            compute = encoder.begin_compute_pass(timestamp_writes=writes)
            compute.set_pipeline(step.pipeline)
            compute.set_bind_group(0, group)
            compute.dispatch_workgroups(*dims)
            compute.end()
        elapsed = 0.0
        if stamps is not None:
            encoder.resolve_query_set(stamps[0], 0, 2, stamps[1], 0)
            encoder.copy_buffer_to_buffer(stamps[1], 0, stamps[2], 0, 16)
        elif timed:  # wall clock: submit the passes alone and wait for them
            start = time.perf_counter()
            self._queue.submit([encoder.finish()])
            self._wait()
            elapsed = (time.perf_counter() - start) * 1e3
            encoder = self._dev.create_command_encoder()
        staged = []
        for i in self._written:
            staging = self._pool.staging(i)
            encoder.copy_buffer_to_buffer(self._pool.buffer(i), 0, staging, 0, staging.size)
            staged.append((staging, tensors[i]))
        self._queue.submit([encoder.finish()])
        for staging, tensor in staged:
            BufferPool.download(staging, tensor)
        self._report(tensors)
        return self._read_stamps(stamps) * self._tick_ns if stamps is not None else elapsed

    # ------------------------------------------------------------------------------------------ timing
    def _query_set(self) -> tuple[Any, Any, Any]:
        if self._query is None:
            import wgpu

            u = wgpu.BufferUsage
            self._query = (self._dev.create_query_set(type="timestamp", count=2),
                           self._dev.create_buffer(size=16, usage=u.QUERY_RESOLVE | u.COPY_SRC),
                           self._dev.create_buffer(size=16, usage=u.MAP_READ | u.COPY_DST))
        return self._query

    def _wait(self) -> None:
        """Block until the queue is idle (wgpu-py 0.32's on_submitted_work_done_sync is broken): map a
        4-byte buffer written by a copy submitted last."""
        import wgpu

        u = wgpu.BufferUsage
        if self._fence is None:
            self._fence = (self._dev.create_buffer(size=4, usage=u.COPY_SRC | u.COPY_DST),
                           self._dev.create_buffer(size=4, usage=u.MAP_READ | u.COPY_DST))
        encoder = self._dev.create_command_encoder()
        encoder.copy_buffer_to_buffer(self._fence[0], 0, self._fence[1], 0, 4)
        self._queue.submit([encoder.finish()])
        self._fence[1].map_sync("READ")
        self._fence[1].unmap()

    @staticmethod
    def _read_stamps(stamps: tuple[Any, Any, Any]) -> float:
        import numpy as np

        readback = stamps[2]
        readback.map_sync("READ")
        try:
            begin, end = np.frombuffer(readback.read_mapped(0, 16), dtype=np.uint64)
        finally:
            readback.unmap()
        return float(int(end) - int(begin)) / 1e6
