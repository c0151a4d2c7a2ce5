"""The Metal execution path: launch plans from real generated MSL (pure, runs anywhere), the Linux messages,
and end-to-end runs against torch on a Mac (``gpu``, skipped elsewhere)."""

from __future__ import annotations

import struct
import sys

import pytest

import tilelang
import tilelang.language as T
from tilelang.backend import resolve_execution_backend
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.testing.corpus import CORPUS
from tilelang_metal.execution_backend import EXECUTION_BACKENDS, MetalDirectBackend, TorchMPSBackend
from tilelang_metal.launch import (
    PLAN_FILE,
    LaunchPlan,
    MetalLaunchError,
    bind_arguments,
    parse_kernels,
    parse_structs,
    plan_for,
)

_ARTIFACTS: dict[str, object] = {}

m = T.dynamic("m")


@T.prim_func
def scale_dyn(A: T.Tensor((m, 64), "float32"), C: T.Tensor((m, 64), "float32"), alpha: T.float32, bias: T.int32):
    with T.Kernel(T.ceildiv(m, 32), threads=128) as bx:
        for i, j in T.Parallel(32, 64):
            row = bx * 32 + i
            if row < m:
                C[row, j] = A[row, j] * alpha + T.cast(bias, "float32")


def artifact_of(name: str):
    if name not in _ARTIFACTS:
        func = scale_dyn if name == "scale_dyn" else CORPUS[name]().prim_func()
        _ARTIFACTS[name] = tilelang.lower(func, target="metal")
    return _ARTIFACTS[name]


def without_ir(artifact):
    """The artifact as the kernel cache rebuilds it (no IR)."""
    from tilelang.artifact import CompiledArtifact

    return CompiledArtifact.from_json(artifact.to_json(), {})


# ---------------------------------------------------------------------------------------------- launch plans
@pytest.mark.parametrize("name, buffers, grid", [
    ("elementwise_add", (0, 1, 2), (8, 8, 1)),
    ("gemm_nn", (0, 1, 2), (4, 4, 1)),
    ("row_sum", (0, 1), (8, 1, 1)),
    ("atomic_scalar", (0, 2, 1), (4, 1, 1)),
    ("flash_attention", (1, 3, 0, 2), (2, 2, 1)),
])
def test_static_plans_follow_the_msl(name, buffers, grid):
    artifact = artifact_of(name)
    plan = plan_for(artifact)
    (step,) = plan.steps
    assert step.name == artifact.metadata["device_functions"][0]
    assert step.buffers == buffers and not step.pods and step.pod_slot is None
    sig = parse_kernels(artifact.kernel_source)[step.name]
    names = [p.name for p in artifact.params]
    assert [names[i] + "_ptr" for i in step.buffers] == [b[1] for b in sig.buffers]
    assert [b[0] for b in sig.buffers] == list(range(len(buffers)))
    args = tuple(_Shaped(p.shape) if p.is_tensor else 1 for p in artifact.params)
    (bound,) = bind_arguments(plan, artifact.params, args)
    assert step.dims(bound) == (grid, (128, 1, 1))
    assert plan_for(without_ir(artifact)) == plan  # the cached artifact's JSON alone gives the same plan


def test_dynamic_dim_is_packed_and_sets_the_grid():
    artifact = artifact_of("dynamic_add")
    plan = plan_for(artifact)
    (step,) = plan.steps
    assert step.buffers == (0, 1) and step.pod_slot == 2
    assert [(f.name, f.msl_type, f.count, f.offset) for f in step.pods] == [("m", "int", 2, 0)]
    assert step.pod_size == 8

    def call(rows, p=plan):
        (bound,) = bind_arguments(p, artifact.params, (_Shaped((rows, 64)), _Shaped((rows, 64))))
        return bound

    assert step.pack(call(100)) == struct.pack("<ii", 100, 0)
    assert step.dims(call(100)) == ((4, 1, 1), (128, 1, 1))
    assert step.dims(call(32))[0] == (1, 1, 1) and step.dims(call(33))[0] == (2, 1, 1)
    cached = plan_for(without_ir(artifact))
    assert [call(v, cached).grid for v in (1, 32, 100)] == [call(v).grid for v in (1, 32, 100)]


def test_scalars_and_dynamic_dim_share_one_struct():
    artifact = artifact_of("scale_dyn")
    (step,) = plan_for(artifact).steps
    assert "constant scale_dyn_kernel_args_t& arg [[ buffer(2) ]]" in artifact.kernel_source
    assert [(f.name, f.msl_type, f.offset) for f in step.pods] == [("alpha", "float", 0), ("bias", "int", 8),
                                                                  ("m", "int", 16)]
    (bound,) = bind_arguments(plan_for(artifact), artifact.params, (_Shaped((70, 64)), _Shaped((70, 64)), 2.5, -3))
    assert step.pack(bound) == struct.pack("<fiiiii", 2.5, 0, -3, 0, 70, 0)
    assert step.dims(bound) == ((3, 1, 1), (128, 1, 1))


def test_plan_round_trips_through_json_and_the_cache_file():
    artifact = artifact_of("scale_dyn")
    plan = plan_for(artifact)
    assert LaunchPlan.from_json(plan.to_json()) == plan
    files = TorchMPSBackend().export_files(artifact)
    stored = without_ir(artifact)
    stored.files = files
    stored.kernel_source = ""  # the stored plan carries its own MSL
    assert plan_for(stored) == plan and set(files) == {PLAN_FILE}


def test_struct_layout_follows_c_alignment():
    msl = "struct s_t {\n  half h[2];\n  float f[2];\n  long q[1];\n  bool b[2];\n};\n"
    fields, size = parse_structs(msl)["s_t"]
    assert [(f.name, f.offset) for f in fields] == [("h", 0), ("f", 4), ("q", 16), ("b", 24)]
    assert size == 32


def test_bad_calls_are_reported():
    artifact = artifact_of("elementwise_add")
    plan = plan_for(artifact)
    with pytest.raises(MetalLaunchError, match="expected 3 arguments"):
        bind_arguments(plan, artifact.params, (_Shaped((256, 256)),))
    with pytest.raises(MetalLaunchError, match="needs shape"):
        bind_arguments(plan, artifact.params, tuple(_Shaped((256, 128)) for _ in range(3)))
    dynamic = artifact_of("scale_dyn")
    with pytest.raises(MetalLaunchError, match="'alpha' must be a number"):
        bind_arguments(plan_for(dynamic), dynamic.params, (_Shaped((70, 64)), _Shaped((70, 64)), "x", -3))


class _Shaped:
    def __init__(self, shape):
        self.shape = shape


# ---------------------------------------------------------------------------------------------- availability
def test_backends_in_preference_order():
    assert [b.name for b in EXECUTION_BACKENDS] == ["torch", "metal"]
    assert isinstance(EXECUTION_BACKENDS[0], TorchMPSBackend)
    assert isinstance(EXECUTION_BACKENDS[1], MetalDirectBackend)


@pytest.mark.skipif(sys.platform == "darwin", reason="the Linux/Windows messages")
@pytest.mark.parametrize("backend", EXECUTION_BACKENDS, ids=lambda b: b.name)
def test_off_macos_running_says_it_needs_macos(backend):
    assert "needs macOS with MPS" in backend.unavailable_reason()
    with pytest.raises(ExecutionBackendUnavailable, match="needs macOS with MPS"):
        backend.load(artifact_of("elementwise_add"))
    with pytest.raises(ExecutionBackendUnavailable, match="needs macOS with MPS"):
        resolve_execution_backend({"kind": "metal"}, backend.name)


# ---------------------------------------------------------------------------------------------- on a Mac
def _require(backend):
    if sys.platform != "darwin":
        pytest.skip("running Metal kernels needs macOS")
    reason = backend.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


_E2E = ["elementwise_add", "dynamic_add", "gemm_nn", "row_sum", "softmax", "atomic_colsum", "flash_attention"]


def _run(backend, name, device):
    import torch

    kernel = CORPUS[name]()
    launcher = backend.load(artifact_of(name))
    inputs = kernel.make_inputs(seed=1)
    args, it = [], iter(inputs)
    for a in kernel.args:
        if a.role == "out":
            args.append(torch.zeros(a.shape, dtype=getattr(torch, a.dtype), device=device))
        else:
            v = next(it)
            args.append(v.to(device) if isinstance(v, torch.Tensor) else v)
    launcher(*args)
    if device == "mps":
        torch.mps.synchronize()
    expected = kernel.ref(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for i, want in zip(kernel.out_idx, expected):
        torch.testing.assert_close(args[i].cpu().float(), want.float(), atol=kernel.atol, rtol=kernel.rtol)


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS with MPS")
@pytest.mark.parametrize("name", _E2E)
def test_torch_mps_runs_corpus(name):
    backend = TorchMPSBackend()
    _require(backend)
    _run(backend, name, "mps")


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS with MPS")
@pytest.mark.parametrize("name", _E2E)
def test_metal_direct_runs_corpus(name):
    backend = MetalDirectBackend()
    _require(backend)
    _run(backend, name, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS with MPS")
@pytest.mark.parametrize("backend", EXECUTION_BACKENDS, ids=lambda b: b.name)
def test_scalars_and_dynamic_rows_run(backend):
    import torch

    _require(backend)
    device = "mps" if backend.name == "torch" else "cpu"
    launcher = backend.load(artifact_of("scale_dyn"))
    for rows in (1, 70, 129):
        a = torch.randn(rows, 64)
        c = torch.zeros(rows, 64, device=device)
        launcher(a.to(device), c, 2.5, -3)
        if device == "mps":
            torch.mps.synchronize()
        torch.testing.assert_close(c.cpu(), a * 2.5 - 3)


# ---------------------------------------------------------------------------------------------- the reference's adapter
def _adapter(name):
    from tilelang.jit.adapter import MetalKernelAdapter

    kernel = CORPUS[name]()
    return MetalKernelAdapter(None, kernel.out_idx, kernel.prim_func())


def test_reference_adapter_compiles_through_this_plugin():
    adapter = _adapter("elementwise_add")
    assert f"kernel void {adapter.kernel_name}(" in adapter.get_kernel_source()
    assert adapter.get_kernel_source().startswith("kernel void ")
    assert adapter.grid_info == [8, 8, 1] and adapter.block_info[0] * adapter.block_info[1] > 1
    assert [p.name for p in adapter.params] == [p.name for p in artifact_of("elementwise_add").params]


@pytest.mark.skipif(sys.platform == "darwin", reason="the Linux/Windows messages")
def test_reference_adapter_launches_through_the_torch_backend():
    adapter = _adapter("elementwise_add")
    with pytest.raises(ExecutionBackendUnavailable, match="'torch' cannot run here: running Metal kernels needs macOS"):
        adapter(None, None, None)


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS with MPS")
def test_reference_adapter_runs_on_mps():
    _require(TorchMPSBackend())

    class Launch:  # the adapter as a backend: its callable takes every argument, outputs included
        def __init__(self, adapter):
            self.adapter = adapter

        def load(self, artifact):
            return self.adapter

    adapter = _adapter("elementwise_add")
    _run(Launch(adapter), "elementwise_add", "mps")
