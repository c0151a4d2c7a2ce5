"""Running WebGPU kernels through the ``wgpu`` execution backend, checked against torch."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import wgpu_kernels as K

import tilelang
from tilelang.artifact import CompiledArtifact, ParamInfo
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu


def _launcher(backend, func):
    return backend.load(tilelang.lower(func, target="webgpu"))


def test_vector_add_from_the_artifact_json_alone(wgpu_backend):
    """A kernel reloaded from its JSON (no IR, no stored WebGPU plan) runs from core's launch plan and WGSL."""
    import json

    art = tilelang.lower(vector_add_gpu(1024, 128), target="webgpu")
    again = CompiledArtifact.from_json(json.loads(json.dumps(art.to_json())), {})
    assert again.device_mod is None and again.launch_plan == art.launch_plan
    a, b, c = torch.randn(1024), torch.randn(1024), torch.zeros(1024)
    wgpu_backend.load(again)(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_an_artifact_without_a_launch_plan_is_refused(wgpu_backend):
    _, device_modules = build_through_registry(vector_add_gpu(1024, 128), "webgpu")
    params = [ParamInfo(n, "float32", (1024,)) for n in "ABC"]
    artifact = CompiledArtifact("vector_add", {"kind": "webgpu"}, params, device_modules[0].inspect_source())
    with pytest.raises(ExecutionBackendUnavailable, match="carries no launch plan"):
        wgpu_backend.load(artifact)


def test_2d_grid(wgpu_backend):
    a, b, c = torch.randn(64, 96), torch.randn(64, 96), torch.zeros(64, 96)
    _launcher(wgpu_backend, K.add_2d())(a, b, c)
    torch.testing.assert_close(c, 2 * a + b)


def test_workgroup_memory_reduction(wgpu_backend):
    a, s = torch.randn(32, 128), torch.zeros(32)
    _launcher(wgpu_backend, K.row_sum())(a, s)
    torch.testing.assert_close(s, a.sum(1), atol=1e-4, rtol=1e-4)


def test_scalars_and_dynamic_shape(wgpu_backend):
    launch = _launcher(wgpu_backend, K.scale_dynamic())
    for n in (1000, 77):
        a, c = torch.randn(n), torch.zeros(n)
        launch(a, c, 1.5, -3)
        torch.testing.assert_close(c, a * 1.5 - 3)


def test_multiple_outputs_with_bounds_check(wgpu_backend):
    a, b, s, d = torch.randn(1000), torch.randn(1000), torch.zeros(1000), torch.zeros(1000)
    _launcher(wgpu_backend, K.sum_diff())(a, b, s, d)
    torch.testing.assert_close(s, a + b)
    torch.testing.assert_close(d, a - b)


def test_in_place_update_of_an_int_tensor(wgpu_backend):
    x = torch.arange(256, dtype=torch.int32)
    launch = _launcher(wgpu_backend, K.int_increment())
    launch(x)
    launch(x)
    torch.testing.assert_close(x, torch.arange(256, dtype=torch.int32) + 2)


def test_grid_wider_than_one_dimension_allows(wgpu_backend):
    a, c = torch.randn(280000), torch.zeros(280000)
    _launcher(wgpu_backend, K.wide_grid())(a, c)
    torch.testing.assert_close(c, a + 1)


def test_three_dimensional_grid_is_folded(wgpu_backend):
    a, b, c = torch.randn(4, 16, 32), torch.randn(4, 16, 32), torch.zeros(4, 16, 32)
    _launcher(wgpu_backend, K.add_3d())(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_plan_survives_the_cache_without_ir(wgpu_backend):
    artifact = tilelang.lower(K.scale_dynamic(), target="webgpu")
    files = wgpu_backend.export_files(artifact)
    cached = CompiledArtifact.from_json(artifact.to_json(), files)
    assert cached.device_mod is None
    a, c = torch.randn(300), torch.zeros(300)
    wgpu_backend.load(cached)(a, c, 2.0, 1)
    torch.testing.assert_close(c, a * 2 + 1)


def test_time_ms_reports_gpu_time(wgpu_backend):
    launch = _launcher(wgpu_backend, vector_add_gpu(1 << 16, 256))
    a, b, c = torch.randn(1 << 16), torch.randn(1 << 16), torch.zeros(1 << 16)
    ms = launch.time_ms(a, b, c, warmup=1, rep=3)
    assert 0 < ms < 1000
    torch.testing.assert_close(c, a + b)


def test_jit_compile_runs_on_webgpu(wgpu_backend):
    kernel = tilelang.compile(vector_add_gpu(512, 128), out_idx=[2], target="webgpu")
    assert kernel.execution_backend == "wgpu"
    a, b = torch.randn(512), torch.randn(512)
    torch.testing.assert_close(kernel(a, b), a + b)


def test_broken_wgsl_error_quotes_the_line(wgpu_backend):
    from tilelang_webgpu.wgsl import WGSLValidationError

    artifact = tilelang.lower(vector_add_gpu(256, 128), target="webgpu")
    bad = artifact.kernel_source.replace("(A_ptr[", "(undefined_thing[", 1)
    with pytest.raises(WGSLValidationError) as info:
        wgpu_backend.load(dataclasses.replace(artifact, kernel_source=bad))
    message = str(info.value)
    assert "vector_add_kernel" in message and "undefined_thing" in message
    assert "C_ptr[" in message.splitlines()[1]  # the offending WGSL line, quoted
    assert info.value.location is not None and info.value.location[1] > 1


def test_argument_count_is_checked(wgpu_backend):
    from tilelang.errors import KernelArgumentError

    launch = _launcher(wgpu_backend, vector_add_gpu(256, 128))
    with pytest.raises(KernelArgumentError, match="takes 3 arguments"):
        launch(torch.zeros(256))
