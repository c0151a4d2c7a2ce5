"""tilelang_cuda.contrib.cutedsl and the CuTeDSL adapter package: import without the CuTe DSL, explain what is
missing, restore cached kernels, resolve dynamic shapes, generate and import the host module."""

from __future__ import annotations

import pytest

import tilelang_cuda.contrib.cutedsl as cutedsl_lib
from tilelang_cuda.adapters.cutedsl import checks
from tilelang_cuda.contrib.cutedsl import CuTeDSLHelperUnavailable

CUTEDSL = {"kind": "cutedsl", "arch": "sm_90"}


@pytest.fixture
def no_cutedsl(monkeypatch):
    monkeypatch.setattr(checks, "_installed_version", lambda: None)
    monkeypatch.setattr(checks, "_has_cute_package", lambda: False)


@pytest.fixture
def standins(monkeypatch):
    """The helper modules re-imported as where the CuTe DSL is absent (they are real where it is installed)."""
    import importlib

    from tilelang_cuda.contrib.cutedsl import atomic, gemm_v1, utils

    modules = (atomic, gemm_v1, utils, cutedsl_lib)
    monkeypatch.setattr(checks, "_installed_version", lambda: None)
    monkeypatch.setattr(checks, "_has_cute_package", lambda: False)
    try:
        for module in modules:
            importlib.reload(module)
        yield modules
    finally:
        monkeypatch.undo()
        for module in modules:
            importlib.reload(module)


def test_helpers_name_the_package_to_install(standins):
    atomic, gemm_v1, utils, lib = standins

    with pytest.raises(CuTeDSLHelperUnavailable, match=r"pip install 'nvidia-cutlass-dsl>=4\.7\.0"):
        atomic.AtomicAdd(None, 1)
    with pytest.raises(ImportError, match="gemm_v1.Gemm_SM80"):
        gemm_v1.Gemm_SM80()
    with pytest.raises(CuTeDSLHelperUnavailable, match="utils.type_map"):
        utils.type_map  # noqa: B018
    with pytest.raises(AttributeError):
        utils.not_a_helper  # noqa: B018
    with pytest.raises(CuTeDSLHelperUnavailable, match="thread_idx"):
        lib.thread_idx()


def test_with_the_dsl_installed_the_reason_points_to_the_cuda_target(monkeypatch):
    from tilelang_cuda.contrib.cutedsl._unavailable import unavailable_reason

    monkeypatch.setattr(checks, "_installed_version", lambda: "4.7.1")
    monkeypatch.setattr(checks, "_has_cute_package", lambda: True)
    reason = unavailable_reason("tilelang_cuda.contrib.cutedsl.warp.warp_reduce_sum")
    assert "pip install" not in reason and "'kind': 'cuda'" in reason


def test_plain_values_are_real():
    assert cutedsl_lib.WARP_SIZE == 32 and cutedsl_lib.FULL_MASK == 0xFFFFFFFF
    assert cutedsl_lib.BYTES_PER_TENSORMAP == 128 and cutedsl_lib.IMMLUT == (0xF0 & 0xCC) | 0xAA
    assert cutedsl_lib.dim3(1, 2, 3).z == 3


@pytest.mark.parametrize(("version", "cute", "message"), [
    ("4.6.0", True, "found version `4.6.0`"),
    ("4.3.4", True, "requires"),
    (None, False, "CUTLASS Python DSL"),
    ("4.7.0", False, "CUTLASS Python DSL"),
])
def test_availability_check(monkeypatch, version, cute, message):
    monkeypatch.setattr(checks, "_installed_version", lambda: version)
    monkeypatch.setattr(checks, "_has_cute_package", lambda: cute)
    with pytest.raises(ImportError, match=message):
        checks.check_cutedsl_available()
    monkeypatch.setattr(checks, "_installed_version", lambda: "4.8.0")
    monkeypatch.setattr(checks, "_has_cute_package", lambda: True)
    checks.check_cutedsl_available()


def _module(tmp_path, text):
    path = tmp_path / "kernel.py"
    path.write_text(text)
    return str(path)


def test_restored_adapter_keeps_sources_apart(tmp_path, no_cutedsl):
    import tvm
    from tvm import tirx

    from tilelang_cuda.adapters.cutedsl.adapter import CuTeDSLKernelAdapter

    prim = tirx.PrimFunc([], tirx.Evaluate(0)).with_attr("global_symbol", "main")
    host = tmp_path / "host_kernel.py"
    host.write_text("# host wrapper")
    from tilelang.jit.adapter.base import CachedTextSource

    lib = _module(tmp_path, "CALLS = []\ndef call(*args, stream=None, device_id=0):\n    CALLS.append(args)\n")
    adapter = CuTeDSLKernelAdapter.from_database(params=[], result_idx=[], target=CUTEDSL, func_or_mod=prim,
                                                 host_kernel_source=CachedTextSource(path=str(host)),
                                                 device_kernel_source="# device", kernel_lib_path=lib)
    assert adapter.target.kind.name == "cuda" and "cutedsl" in adapter.target.keys
    assert adapter.host_kernel_source is None  # read lazily
    assert adapter.get_host_source() == "# host wrapper"
    assert adapter.get_kernel_source(kernel_only=False) == "# device\n\n# host wrapper"
    assert adapter.get_generated_module_source().startswith("CALLS = []")
    assert hasattr(adapter.pymodule, "call") and isinstance(adapter.ir_module, tvm.IRModule)
    with pytest.raises(ValueError, match="at least one torch.Tensor"):
        adapter()


def test_fresh_adapters_and_wrappers_explain_what_is_missing(no_cutedsl, monkeypatch):
    from tilelang_cuda.adapters.cutedsl.adapter import CuTeDSLCodegenUnavailable, CuTeDSLKernelAdapter
    from tilelang_cuda.adapters.cutedsl.wrapper import TLCuTeDSLSourceWrapper

    with pytest.raises(ImportError, match="nvidia-cutlass-dsl"):
        CuTeDSLKernelAdapter([], [], CUTEDSL, None)
    monkeypatch.setattr(checks, "_installed_version", lambda: "4.7.0")
    monkeypatch.setattr(checks, "_has_cute_package", lambda: True)
    with pytest.raises(CuTeDSLCodegenUnavailable, match="does not offer"):
        TLCuTeDSLSourceWrapper(None, "", CUTEDSL)


def test_dynamic_symbols_resolve_from_live_tensors(tmp_path, no_cutedsl):
    import torch
    from tvm import tirx

    from tilelang.engine.param import KernelParam
    from tilelang_cuda.adapters.cutedsl.adapter import CuTeDSLKernelAdapter

    n, s = tirx.Var("N", "int32"), tirx.Var("S", "int32")
    a = tirx.decl_buffer((n, 4), "float32", name="A")
    b = tirx.decl_buffer((n,), "float32", name="B", strides=(s,))
    prim = tirx.PrimFunc([a, b], tirx.Evaluate(0)).with_attr("global_symbol", "main")
    params = [KernelParam.from_buffer(a), KernelParam.from_buffer(b)]
    lib = _module(tmp_path, "def call(*args, stream=None, device_id=0):\n    pass\n")
    adapter = CuTeDSLKernelAdapter.from_database(params=params, result_idx=[1], target=CUTEDSL, func_or_mod=prim,
                                                 host_kernel_source="", device_kernel_source="",
                                                 kernel_lib_path=lib)
    assert [v.name for v in adapter.dynamic_symbolic_order] == ["N", "S"]
    x = torch.empty(6, 4)
    assert adapter._resolve_dynamic_symbolic_value(n, [x, None]) == 6
    assert adapter._resolve_dynamic_symbolic_value(s, [x, None]) == 0  # only a stride of an absent tensor
    assert adapter._resolve_dynamic_symbolic_value(s, [x, torch.empty(12)[::3]]) == 3
    with pytest.raises(TypeError, match="no live tensor source"):
        adapter._resolve_dynamic_symbolic_value(n, [None, None])
    assert adapter._resolve_dynamic_symbolic_value(n, [None, None], require_live_shape=False) == 0
    with pytest.raises(ValueError, match="require CUDA tensors"):
        adapter(x)


def test_library_generator_writes_and_imports_the_module(tmp_path):
    from tvm.target import Target

    from tilelang_cuda.adapters.cutedsl.adapter import cutedsl_target
    from tilelang_cuda.adapters.cutedsl.libgen import CuTeDSLLibraryGenerator

    gen = CuTeDSLLibraryGenerator(cutedsl_target(CUTEDSL))
    with pytest.raises(RuntimeError, match="update_host_func"):
        gen.compile_lib()
    gen.update_host_func("VALUE = 41 + 1\n")
    path = gen.compile_lib()
    assert path.endswith("kernel.py") and gen.load_lib().VALUE == 42
    plain = CuTeDSLLibraryGenerator(Target({"kind": "cuda", "arch": "sm_80"}))
    plain.update_host_func("")
    with pytest.raises(ValueError, match="Unsupported target"):
        plain.compile_lib()
