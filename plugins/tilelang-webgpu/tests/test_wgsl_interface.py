"""Reading TVM's WGSL convention, the launch plan and the adapter override (no device needed)."""

from __future__ import annotations

import struct

import pytest

from tilelang_webgpu.plan import KernelStep, LaunchPlan
from tilelang_webgpu.wgsl import ShaderInterface, split_functions, validation_error

WGSL = """@group(0) @binding(0) var<storage, read> A_ptr : array<f32>;
@group(0) @binding(1) var<storage, read_write> C_ptr : array<f32>;

struct PODArgs {
  alpha: f32,
  n: i32,
  packGridDimX: u32
}
@group(0) @binding(2) var<uniform> podArgs : PODArgs;

@compute @workgroup_size(64, 2, 1)
fn scale_kernel(
  @builtin(workgroup_id) blockIdx : vec3<u32>,
  @builtin(num_workgroups) gridDim : vec3<u32>,
  @builtin(local_invocation_id) threadIdx : vec3<u32>
) {
  if (blockIdx.z * gridDim.x + blockIdx.x > podArgs.packGridDimX) { return; }
  C_ptr[0] = A_ptr[0] * podArgs.alpha;
}
"""


def test_interface_follows_tvm_convention():
    iface = ShaderInterface.parse(WGSL)
    assert iface.entry == "scale_kernel"
    assert [(b.name, b.access) for b in iface.storage] == [("A_ptr", "read"), ("C_ptr", "read_write")]
    assert iface.uniform.index == 2
    assert iface.pod_fields == (("alpha", "f32"), ("n", "i32"), ("packGridDimX", "u32"))
    assert iface.workgroup_size == (64, 2, 1)
    assert iface.guard_inclusive  # TVM's ">" guard: the launcher passes gridDim.x - 1


def test_pods_pack_in_field_order_padded_to_16_bytes():
    data = ShaderInterface.parse(WGSL).pack_pods([1.5, -3, 7])
    assert len(data) == 16
    assert struct.unpack("<fiI", data[:12]) == (1.5, -3, 7)


def test_split_functions_reads_tvm_headers():
    header = "// Function: k\n//----------------------------------------\n"
    source = header + header + WGSL.replace("scale_kernel", "k")
    assert list(split_functions(source)) == ["k"]
    assert split_functions(WGSL) == {"scale_kernel": WGSL}


def test_validation_error_names_kernel_and_quotes_line():
    naga = ("Validation Error\n\nCaused by:\n  In wgpuDeviceCreateShaderModule\n\nShader '' parsing error: "
            "no definition in scope for identifier: `inff`\n  ┌─ wgsl:18:3\n  │\n")
    err = validation_error(RuntimeError(naga), WGSL, "scale_kernel")
    text = str(err)
    assert "scale_kernel" in text and "no definition in scope for identifier" in text
    assert "C_ptr[0] = A_ptr[0] * podArgs.alpha;" in text and "^" in text


def test_plan_json_round_trip():
    from tilelang.engine.launch_plan import DeviceParam, KernelLaunch
    from tilelang.engine.launch_plan import LaunchPlan as CoreLaunchPlan

    params = (DeviceParam("A_ptr", "handle", True, 0), DeviceParam("C_ptr", "handle", True, 1),
              DeviceParam("alpha", "float32", False, value=("arg", 2)),
              DeviceParam("n", "int32", False, value=("dim", 0, 0)))
    kernel = KernelLaunch("scale_kernel", params, (("ceildiv", ("dim", 0, 0), 64), 1, 1), (64, 1, 1))
    step = KernelStep(WGSL, (0, 1), kernel)
    plan = LaunchPlan("scale", CoreLaunchPlan(("A", "C", "alpha"), (0, 1), (kernel,)), (step,))
    assert LaunchPlan.from_json(plan.to_json()) == plan


def test_unknown_backend_override_lists_choices(monkeypatch):
    from tilelang.errors import ToolchainMissing
    from tilelang_webgpu import adapter

    monkeypatch.setenv(adapter.BACKEND_ENV, "vulcan")
    with pytest.raises(ToolchainMissing, match="use one of: .*gl.*vulkan"):
        adapter._requested_backend()
    monkeypatch.setenv(adapter.BACKEND_ENV, "GL")
    assert adapter._requested_backend() == "OpenGL"
