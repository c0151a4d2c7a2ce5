"""The HIP runtime execution backend: argument layout and packing, grids, ctypes bindings (no GPU needed), and
an end-to-end run against torch on a real AMD GPU (``gpu``-marked, skipped without one)."""

from __future__ import annotations

import ctypes
import struct
import warnings
from types import SimpleNamespace

import pytest

from tilelang.artifact import ParamInfo
from tilelang.engine.launch_plan import DeviceParam, KernelLaunch, LaunchPlan
from tilelang.errors import TileLangError
from tilelang_rocm import hip
from tilelang_rocm.execution_backend import (
    HipRuntimeBackend,
    KernelArg,
    bind_args,
    check_binding,
    kernel_layout,
    llvm_signature,
    metadata_args,
    natural_layout,
    pack_args,
)

LL = """; ModuleID = 'TVMAMDGPUModule'
define dllexport amdgpu_kernel void @k_kernel(ptr addrspace(1) noalias readonly captures(none) %A, i32 %n, \
ptr addrspace(1) noalias writeonly captures(none) %C, float %alpha, i64 %m) local_unnamed_addr #0 {
entry:
  ret void
}
"""

ASM = """\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .name:           A
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .name:           n
        .offset:         8
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .name:           C
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .name:           alpha
        .offset:         24
        .size:           4
        .value_kind:     by_value
      - .name:           m
        .offset:         32
        .size:           8
        .value_kind:     by_value
      - .offset:         40
        .size:           4
        .value_kind:     hidden_block_count_x
    .kernarg_segment_size: 296
    .name:           k_kernel
    .symbol:         k_kernel.kd
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
\t.end_amdgpu_metadata
"""

PARAMS = [ParamInfo("A", "float32", ("m", 64)), ParamInfo("C", "float32", ("m", 64)),
          ParamInfo("n", "int32", (), is_tensor=False), ParamInfo("alpha", "float32", (), is_tensor=False)]


# core's launch plan of LL's k_kernel: A, n, C, alpha, m (m: the first extent of A)
K_LAUNCH = KernelLaunch("k_kernel", (DeviceParam("A", "handle", True, 0),
                                     DeviceParam("n", "int32", False, None, ("arg", 2)),
                                     DeviceParam("C", "handle", True, 1),
                                     DeviceParam("alpha", "float32", False, None, ("arg", 3)),
                                     DeviceParam("m", "int64", False, None, ("dim", 0, 0))),
                        (("ceildiv", ("dim", 0, 0), 32), 1, 1), (64, 1, 1))
PLAN = LaunchPlan(("A", "C", "n", "alpha"), (0, 1), (K_LAUNCH,))


def fake_tensor(address: int, shape: tuple[int, ...], device: str = "cuda", index: int | None = 0):
    return SimpleNamespace(data_ptr=lambda: address, shape=shape, device=SimpleNamespace(type=device, index=index))


def test_llvm_signature_reads_names_and_types():
    assert llvm_signature(LL, "k_kernel") == [("A", "ptr"), ("n", "i32"), ("C", "ptr"), ("alpha", "float"),
                                              ("m", "i64")]
    with pytest.raises(TileLangError, match="no amdgpu_kernel 'other'"):
        llvm_signature(LL, "other")


def test_metadata_args_drop_hidden_arguments():
    args = metadata_args(ASM, "k_kernel")
    assert [(a["name"], int(a["offset"])) for a in args] == [("A", 0), ("n", 8), ("C", 16), ("alpha", 24), ("m", 32)]
    assert metadata_args(ASM, "missing") is None and metadata_args("no metadata", "k_kernel") is None


def test_natural_layout_matches_the_code_object_metadata():
    sig = llvm_signature(LL, "k_kernel")
    assert natural_layout(sig) == kernel_layout(sig, ASM, "k_kernel")
    assert [a.offset for a in natural_layout(sig)] == [0, 8, 16, 24, 32]
    assert [a.is_pointer for a in natural_layout(sig)] == [True, False, True, False, False]


def test_layout_mismatch_is_an_error():
    sig = llvm_signature(LL, "k_kernel")[:-1]
    with pytest.raises(TileLangError, match="lists 5 kernel arguments, the LLVM IR 4"):
        kernel_layout(sig, ASM, "k_kernel")


def test_pack_args_writes_each_value_at_its_offset():
    layout = natural_layout(llvm_signature(LL, "k_kernel"))
    buf = pack_args(layout, [0x7F0000001000, -3, 0x7F0000002000, 1.5, 2**40])
    assert len(buf) == 40
    assert struct.unpack_from("<Q", buf, 0)[0] == 0x7F0000001000
    assert struct.unpack_from("<i", buf, 8)[0] == -3
    assert struct.unpack_from("<Q", buf, 16)[0] == 0x7F0000002000
    assert struct.unpack_from("<f", buf, 24)[0] == 1.5
    assert struct.unpack_from("<q", buf, 32)[0] == 2**40
    assert pack_args([], []) == b""
    half = [KernelArg("h", 0, 2, "half", False), KernelArg("b", 2, 2, "bfloat", False),
            KernelArg("f", 4, 1, "i1", False)]
    assert struct.unpack("<eHB", pack_args(half, [0.5, 1.0, True])[:5]) == (0.5, 0x3F80, 1)
    with pytest.raises(ValueError):
        pack_args(layout, [1, 2])


def test_bind_args_maps_tensors_scalars_and_dims():
    layout = natural_layout(llvm_signature(LL, "k_kernel"))
    check_binding(layout, K_LAUNCH, "k_kernel")
    a, c = fake_tensor(0x1000, (100, 64)), fake_tensor(0x2000, (100, 64))
    values, bound = bind_args(layout, PLAN, PARAMS, (a, c, 7, 0.5))
    assert values == [0x1000, 7, 0x2000, 0.5, 100]
    assert (bound.grid, bound.block) == ((4, 1, 1), (64, 1, 1))


def test_bind_args_checks_devices():
    layout = natural_layout(llvm_signature(LL, "k_kernel"))
    gpu = fake_tensor(0x1000, (4, 64))
    with pytest.raises(TileLangError, match="'C' must be a torch tensor on an AMD GPU"):
        bind_args(layout, PLAN, PARAMS, (gpu, fake_tensor(0x2000, (4, 64), device="cpu"), 1, 1.0))
    with pytest.raises(TileLangError, match="'C' is on cuda:1, the kernel runs on cuda:0"):
        bind_args(layout, PLAN, PARAMS, (gpu, fake_tensor(0x2000, (4, 64), index=1), 1, 1.0))
    with pytest.raises(TileLangError, match="expected 4 arguments"):
        bind_args(layout, PLAN, PARAMS, (gpu,))


def test_unbindable_kernel_argument_is_reported():
    layout = [KernelArg("B", 0, 8, "ptr", True)]
    scalar_first = KernelLaunch("k_kernel", (DeviceParam("n", "int32", False, None, ("arg", 2)),), (1, 1, 1),
                                (1, 1, 1))
    with pytest.raises(TileLangError, match="cannot bind kernel argument 'B'"):
        check_binding(layout, scalar_first, "k_kernel")
    with pytest.raises(TileLangError, match="takes 1 kernel arguments, the launch plan passes 5"):
        check_binding([KernelArg("A", 0, 8, "ptr", True)], K_LAUNCH, "k_kernel")


class FakeLib:
    """Any attribute is a fresh namespace that records restype / argtypes."""

    def __getattr__(self, name):
        fn = SimpleNamespace()
        setattr(self, name, fn)
        return fn


def test_ctypes_signatures_are_declared():
    lib = hip.declare(FakeLib())
    launch = lib.hipModuleLaunchKernel
    assert launch.restype is ctypes.c_int
    assert launch.argtypes[0] is ctypes.c_void_p and launch.argtypes[1:8] == [ctypes.c_uint] * 7
    assert launch.argtypes[8] is ctypes.c_void_p and len(launch.argtypes) == 11
    assert lib.hipModuleLoadData.argtypes == [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    assert lib.hipModuleGetFunction.argtypes[2] is ctypes.c_char_p
    assert lib.hipGetErrorString.restype is ctypes.c_char_p
    for name in ("hipInit", "hipModuleLoadData", "hipModuleGetFunction", "hipModuleLaunchKernel", "hipGetErrorString"):
        assert hasattr(getattr(lib, name), "argtypes") and hasattr(getattr(lib, name), "restype")


def test_check_raises_naming_the_call():
    lib = SimpleNamespace(hipGetErrorName=lambda r: b"hipErrorInvalidImage",
                          hipGetErrorString=lambda r: b"invalid kernel file")
    hip.check(0, "hipModuleLoadData", lib)
    with pytest.raises(hip.HipError, match=r"hipModuleLoadData failed: HIP error 200 \(hipErrorInvalidImage: "
                                           r"invalid kernel file\)"):
        hip.check(200, "hipModuleLoadData", lib)


def test_missing_library_message(monkeypatch):
    monkeypatch.setattr(hip, "candidates", lambda: ["/nonexistent/libamdhip64.so"])
    hip.libhip.cache_clear()
    try:
        with pytest.raises(OSError, match=r"libamdhip64\.so\) cannot be loaded; tried /nonexistent/libamdhip64"):
            hip.libhip()
    finally:
        hip.libhip.cache_clear()


def test_unavailable_reasons(monkeypatch):
    torch = pytest.importorskip("torch")
    backend = HipRuntimeBackend()
    if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
        assert "no AMD GPU" in backend.unavailable_reason()
    monkeypatch.setattr(torch.version, "hip", "6.2", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(hip, "libhip", lambda: (_ for _ in ()).throw(OSError("libamdhip64.so: not found")))
    assert backend.unavailable_reason().startswith("the HIP runtime library (libamdhip64) cannot be loaded")


def test_launch_plan_of_a_real_artifact(lld22):
    """The corpus's dynamic kernel: layout from its code object, binding and grid for a 100-row call."""
    import tilelang
    from tilelang.testing.corpus import dynamic_add
    from tilelang_rocm.compiler import finalize
    from tilelang_rocm.execution_backend import HipLaunch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = finalize(tilelang.lower(dynamic_add().prim_func(), target={"kind": "rocm", "mcpu": "gfx942"}))
    plan = HipLaunch(artifact)
    assert plan.kernel == "dynamic_add_kernel"
    assert [(a.name, a.offset, a.llvm_type) for a in plan.layout] == [("A", 0, "ptr"), ("C", 8, "ptr"),
                                                                      ("m", 16, "i32")]
    grid, block, kernargs, index = plan.prepare((fake_tensor(0x1000, (100, 64)), fake_tensor(0x2000, (100, 64))))
    assert (grid, block, index) == ((4, 1, 1), (128, 1, 1), 0)
    assert struct.unpack("<QQi4x", kernargs) == (0x1000, 0x2000, 100)


def _has_amd_gpu() -> bool:
    from tilelang_rocm.target import detect

    return detect() is not None


@pytest.mark.gpu
@pytest.mark.skipif(not _has_amd_gpu(), reason="needs an AMD GPU visible to a ROCm build of torch")
@pytest.mark.parametrize("name", ["elementwise_add", "dynamic_add", "gemv", "softmax", "gemm_nn", "atomic_colsum"])
def test_corpus_matches_torch_on_an_amd_gpu(name):
    import torch

    import tilelang
    from tilelang.testing import corpus

    kernel = corpus.CORPUS[name]()
    jit = tilelang.compile(kernel.prim_func(), target="rocm")
    assert jit.execution_backend == "hip_runtime"
    inputs = kernel.make_inputs(device="cuda")
    outputs = kernel.make_outputs(device="cuda")  # zero-filled: atomics accumulate into them
    jit(*kernel.call_args(inputs, outputs))
    torch.cuda.synchronize()
    want = kernel.ref(*[t.cpu() if hasattr(t, "cpu") else t for t in inputs])
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(outputs, want):
        torch.testing.assert_close(g.cpu().float(), w.float(), atol=kernel.atol, rtol=kernel.rtol)
