"""The WebGPU view of a kernel's launch plan: which WGSL shader each step runs and what each binding holds.

Core builds the launch plan once at lowering time (``artifact.launch_plan``,
`tilelang.engine.launch_plan`): device functions in launch order, each parameter's binding, grid and block
as safe expressions. Here each step adds its WGSL (split out of the kernel source) and the caller's parameter
index per storage binding. The plan is stored as JSON next to the artifact (`PLAN_FILE`) so a kernel loaded
from the cache keeps the debug log's record table, which only the IR has.

A kernel that uses ``T.print`` / ``T.device_assert`` binds the hidden debug log (`tilelang_webgpu.passes.debug_log`):
its binding's parameter index is `DEBUG_LOG`, and the plan keeps the log's record table (`LaunchPlan.debug`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tilelang.backend.sdk import KernelLaunch, LaunchExpr
from tilelang.backend.sdk import LaunchPlan as CoreLaunchPlan
from tilelang.errors import ExecutionBackendUnavailable
from tilelang_webgpu.wgsl import split_functions

__all__ = ["DEBUG_LOG", "PLAN_FILE", "KernelStep", "LaunchPlan", "plan_for"]

PLAN_FILE = "webgpu_launch.json"
_VERSION = 2
DEBUG_LOG = -1  # the parameter index of the debug log's binding


@dataclass(frozen=True)
class KernelStep:
    """One device function: its WGSL, the parameter index per storage binding and core's launch of it (the
    ``PODArgs`` scalars, ``packGridDimX`` excluded, are its non-pointer parameters)."""

    wgsl: str
    buffers: tuple[int, ...]
    launch: KernelLaunch

    @property
    def name(self) -> str:
        return self.launch.name

    @property
    def grid(self) -> tuple[LaunchExpr, LaunchExpr, LaunchExpr]:
        return self.launch.grid

    @property
    def pods(self) -> tuple[LaunchExpr, ...]:
        return tuple(p.value for p in self.launch.params if not p.is_pointer)


@dataclass(frozen=True)
class LaunchPlan:
    """Core's plan (`launch`) with one `KernelStep` per kernel, in launch order; `debug`: the debug log's
    record table (empty when no step binds the log)."""

    name: str
    launch: CoreLaunchPlan
    steps: tuple[KernelStep, ...]
    debug: tuple[dict[str, str], ...] = ()

    @property
    def uses_debug_log(self) -> bool:
        return any(DEBUG_LOG in s.buffers for s in self.steps)

    def to_json(self) -> str:
        return json.dumps({"version": _VERSION, "name": self.name, "launch": self.launch.to_json(),
                           "steps": [{"wgsl": s.wgsl, "buffers": list(s.buffers)} for s in self.steps],
                           "debug": list(self.debug)})

    @classmethod
    def from_json(cls, text: str | bytes) -> LaunchPlan:
        data = json.loads(text)
        if data.get("version") != _VERSION:
            raise ValueError(f"launch plan version {data.get('version')!r}, expected {_VERSION}")
        launch = CoreLaunchPlan.from_json(data["launch"])
        steps = tuple(KernelStep(s["wgsl"], tuple(s["buffers"]), k) for s, k in zip(data["steps"], launch.kernels))
        return cls(data["name"], launch, steps, tuple(data.get("debug", ())))


def plan_for(artifact: Any) -> LaunchPlan:
    """The WebGPU plan of `artifact`: its stored plan, else one made from core's plan and the WGSL."""
    stored = artifact.files.get(PLAN_FILE) if artifact.files else None
    if stored is not None:
        return LaunchPlan.from_json(stored)
    launch = getattr(artifact, "launch_plan", None)
    if launch is None:
        raise ExecutionBackendUnavailable(f"wgpu: kernel {artifact.name!r} carries no launch plan: recompile it "
                                          "(clear the kernel cache)")
    shaders = split_functions(artifact.kernel_source)
    if not shaders:
        raise ExecutionBackendUnavailable(f"wgpu: kernel {artifact.name!r} has no WGSL compute shader to run")
    steps = []
    for kernel in launch.kernels:
        if kernel.name not in shaders:
            raise ExecutionBackendUnavailable(f"wgpu: no WGSL for device function {kernel.name!r} of "
                                              f"{artifact.name!r}")
        buffers = tuple(_buffer_index(artifact.name, kernel.name, launch.param_names, p)
                        for p in kernel.params if p.is_pointer)
        steps.append(KernelStep(shaders[kernel.name], buffers, kernel))
    debug: tuple[dict[str, str], ...] = ()
    if any(DEBUG_LOG in s.buffers for s in steps):
        from tilelang_webgpu.passes.debug_log import records_of

        mods = [m for m in (artifact.host_mod, artifact.device_mod) if m is not None]
        debug = tuple(records_of([f for m in mods for f in m.functions.values()]))
    return LaunchPlan(artifact.name, launch, tuple(steps), debug)


def _buffer_index(kernel: str, fname: str, names: tuple[str, ...], param: Any) -> int:
    from tilelang_webgpu.passes.debug_log import LOG_PARAM

    if param.tensor is not None:
        return int(param.tensor)
    if LOG_PARAM in param.name and LOG_PARAM not in names:
        return DEBUG_LOG
    raise ExecutionBackendUnavailable(
        f"wgpu: device function {fname!r} of {kernel!r} reads buffer {param.name!r}, which is none of the "
        f"kernel's parameters ({', '.join(names)}); WebGPU kernels cannot use host-allocated workspaces")
