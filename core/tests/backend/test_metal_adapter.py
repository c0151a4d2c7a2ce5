"""`tilelang.jit.adapter.MetalKernelAdapter`: the reference's Metal adapter hands launching to the execution
backend registered for the ``metal`` target kind (no plugin import), with the reference's calling convention."""

from __future__ import annotations

import pytest

from tilelang.artifact import CompiledArtifact, ParamInfo
from tilelang.backend import ExecutionBackend, register_execution_backends
from tilelang.engine.launch_plan import DeviceParam, KernelLaunch, LaunchPlan
from tilelang.errors import ExecutionBackendUnavailable, InvalidExecutionBackend, TileLangError
from tilelang.jit.adapter import MetalKernelAdapter

pytestmark = pytest.mark.usefixtures("fresh_registries")

MSL = "#include <metal_stdlib>\nusing namespace metal;\nkernel void add_kernel(device float* A) {}\n"


class RecordingBackend(ExecutionBackend):
    """Stands in for the Metal plugin's backend: records what it was given to load and run."""

    def __init__(self, name, reason=None):
        self.name, self.reason, self.loaded, self.calls = name, reason, [], []

    def unavailable_reason(self):
        return self.reason

    def load(self, artifact):
        self.loaded.append(artifact)
        return lambda *args: self.calls.append(args)


def artifact(kind="metal"):
    params = [ParamInfo("A", "float32", (256,)), ParamInfo("B", "float32", (256,))]
    plan = LaunchPlan(("A", "B"), (0, 1), (KernelLaunch("add_kernel", (DeviceParam("A", "handle", True, 0),
                                                                     DeviceParam("B", "handle", True, 1)),
                                                        (2, 1, 1), (128, 1, 1)),))
    return CompiledArtifact("add", {"kind": kind}, params, MSL, launch_plan=plan)


def test_launch_goes_to_the_registered_backend_once_with_every_argument():
    backend = RecordingBackend("mps-recorder")
    register_execution_backends("metal", backend)
    built = artifact()
    adapter = MetalKernelAdapter(None, [1], None, artifact=built, execution_backend="mps-recorder")
    assert (adapter.kernel_name, adapter.block_info, adapter.grid_info) == ("add_kernel", [128, 1, 1], [2, 1, 1])
    assert adapter.result_idx == [1] and [p.name for p in adapter.params] == ["A", "B"]
    assert backend.loaded == []  # building the adapter runs nothing
    adapter("a", "b")
    adapter("c", "d")
    assert backend.loaded == [built] and backend.calls == [("a", "b"), ("c", "d")]
    with pytest.raises(TileLangError, match="every kernel argument, outputs included \\(2\\), got 1"):
        adapter("a")


def test_source_is_the_artifacts_msl_cut_at_the_kernel_as_the_reference():
    adapter = MetalKernelAdapter(None, None, None, artifact=artifact(), execution_backend="x")
    assert adapter.get_kernel_source() == "kernel void add_kernel(device float* A) {}\n"
    assert adapter.get_kernel_source(kernel_only=False) == MSL


def test_a_backend_that_cannot_run_here_says_why():
    register_execution_backends("metal", RecordingBackend("mps-recorder", reason="needs macOS"))
    adapter = MetalKernelAdapter(None, None, None, artifact=artifact(), execution_backend="mps-recorder")
    with pytest.raises(ExecutionBackendUnavailable, match="'mps-recorder' cannot run here: needs macOS"):
        adapter("a", "b")
    with pytest.raises(InvalidExecutionBackend, match="Invalid execution backend 'nosuch'"):
        MetalKernelAdapter(None, None, None, artifact=artifact(), execution_backend="nosuch")("a", "b")


def test_refuses_other_targets_and_missing_programs():
    with pytest.raises(TileLangError, match="compiled for 'metal'; this one is for 'cuda'"):
        MetalKernelAdapter(None, None, None, artifact=artifact("cuda"))
    with pytest.raises(TileLangError, match="needs the program to run .* got int"):
        MetalKernelAdapter(None, None, 42)
