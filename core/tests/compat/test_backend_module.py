"""The reference's backend-module API (`BackendModule`, `BackendContext`, detectors) over the plugin registries."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytestmark = pytest.mark.backend("llvm", "c")


def test_cpu_module_and_execution_names():
    from tvm.target import Target

    from tilelang.backend import get_backend, list_backends, register_backend

    cpu = get_backend("cpu")
    assert cpu.target_kinds == ("c", "llvm")
    assert cpu.allowed_execution_backends(Target("c")) == ("cython", "tvm_ffi")
    assert cpu.allowed_execution_backends(Target("llvm")) == ("tvm_ffi",)
    assert cpu.resolve_execution_backend("auto", Target("c")).name == "cython"
    assert cpu.resolve_execution_backend("ctypes", Target("llvm")).backend.name == "tvm_ffi"
    with pytest.raises(ValueError, match="Invalid execution backend 'nvrtc' for target 'llvm'. Allowed: tvm_ffi"):
        cpu.resolve_execution_backend("nvrtc", Target("llvm"))
    assert register_backend(cpu) is cpu
    with pytest.raises(ValueError, match="different declaration"):
        register_backend(replace(cpu, callbacks={"unit.cb": lambda: None}))
    backends = list_backends()
    backends.clear()
    assert "cpu" in list_backends()


def test_manifest_validation():
    from tilelang.backend import get_backend

    cpu = get_backend("cpu")
    spec = cpu.execution_backends[0]
    with pytest.raises(ValueError, match="must be unique"):
        replace(cpu, execution_backends=(spec, spec))
    with pytest.raises(ValueError, match="exactly one pipeline"):
        replace(cpu, target_kinds=("c",))


def test_backend_context_and_its_pipeline_compiles():
    import tvm

    from tilelang.backend import BackendContext, create_backend_context
    from tilelang.testing.corpus import elementwise_add

    ctx = create_backend_context("llvm", None, "auto")
    assert isinstance(ctx, BackendContext)
    assert ctx.module.name == "cpu" and ctx.execution_backend.name == "tvm_ffi"
    assert ctx.module.get_device_codegen(ctx.target).name == "llvm"
    with pytest.raises(AttributeError):
        ctx.target = None
    func = elementwise_add(64, 64).func.with_attr("global_symbol", "main")
    lowered = ctx.lower(tvm.IRModule({"main": func}))
    assert "main" in [gv.name_hint for gv in lowered.functions.keys()]


def test_the_jit_accepts_reference_execution_names():
    import torch

    import tilelang
    import tilelang.language as T

    @T.prim_func
    def add_one(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64) as _:
            for i in T.Parallel(64):
                B[i] = A[i] + 1.0

    for name in ("cython", "tvm_ffi", "ctypes"):
        kernel = tilelang.compile(add_one, out_idx=-1, target="c", execution_backend=name)
        x = torch.randn(64)
        torch.testing.assert_close(kernel(x), x + 1)
    with pytest.raises(ValueError, match="Invalid execution backend 'nvrtc'.*Allowed: cython, tvm_ffi"):
        tilelang.compile(add_one, out_idx=-1, target="c", execution_backend="nvrtc")


def test_target_detectors_registry():
    from tvm.target import Target

    import tilelang.backend.target as registry

    saved = dict(registry._TARGET_DETECTORS), set(registry._mirrored_detectors)
    try:
        registry._TARGET_DETECTORS.clear()
        registry.register_target_detector("none", lambda: None, override=True)
        registry.register_target_detector("mine", lambda: Target({"kind": "llvm", "mcpu": "haswell"}), override=True)
        found = registry.auto_detect_target()
        assert found.kind.name == "llvm" and str(found.attrs["mcpu"]) == "haswell"
        with pytest.raises(ValueError, match="already registered"):
            registry.register_target_detector("mine", lambda: None)
    finally:
        registry._TARGET_DETECTORS.clear()
        registry._TARGET_DETECTORS.update(saved[0])
        registry._mirrored_detectors.clear()
        registry._mirrored_detectors.update(saved[1])


def test_option_strings_are_refused_with_the_dict_spelling():
    from tilelang.backend.target import determine_target

    with pytest.raises(AssertionError, match=r"Pass target options as a dict.*\{'kind': 'llvm', 'mcpu': 'haswell'\}"):
        determine_target("llvm -mcpu=haswell")
