"""The NVRTC adapter's generated launcher (checked against a recording stand-in for the CUDA driver), and NVRTC
compiling a lowered kernel where cuda-python is installed."""

from __future__ import annotations

import importlib.util
import sys
import types
import warnings

import pytest

pytestmark = pytest.mark.backend("cuda")


def _lowered():
    import tilelang
    import tilelang.language as T

    N = T.dynamic("N")

    @T.prim_func
    def scale(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32), s: T.float32):
        with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
            S = T.alloc_shared((128,), T.float32)
            for i in T.Parallel(128):
                S[i] = A[bx * 128 + i] * s
            for i in T.Parallel(128):
                B[bx * 128 + i] = S[i]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scale, tilelang.lower(scale, target={"kind": "cuda", "arch": "sm_80"})


class _Status:
    CUDA_SUCCESS = 0


def _fake_driver(launches: list) -> types.ModuleType:
    driver = types.ModuleType("cuda.bindings.driver")
    driver.CUresult = _Status
    driver.CUfunction = lambda handle: ("function", handle)
    driver.CUdevice = int
    driver.CUfunction_attribute = types.SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=8)
    driver.cuKernelSetAttribute = lambda *args: (0,)

    def launch(func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        launches.append({"func": func, "grid": (gx, gy, gz), "block": (bx, by, bz), "smem": smem,
                         "stream": stream, "values": params[0], "types": params[1]})
        return (0,)

    driver.cuLaunchKernel = launch
    return driver


def test_generated_launcher_launches_with_the_kernels_extents(tmp_path, monkeypatch):
    import ctypes

    import torch

    from tilelang_cuda.adapters.nvrtc import wrapper

    _, art = _lowered()
    launches = [wrapper._launch_of(str(gv.name_hint), f) for gv, f in art.device_mod.functions.items()]
    assert launches[0].params == (("A_ptr", "handle"), ("B_ptr", "handle"), ("N", "int32"), ("s", "float32"))
    source = wrapper.generate_launcher(launches, ["A", "B", "s", "N"])
    path = tmp_path / "kernel.py"
    path.write_text(source)

    recorded: list = []
    cuda_pkg, bindings = types.ModuleType("cuda"), types.ModuleType("cuda.bindings")
    driver = _fake_driver(recorded)
    bindings.driver, cuda_pkg.bindings = driver, bindings
    for name, module in (("cuda", cuda_pkg), ("cuda.bindings", bindings), ("cuda.bindings.driver", driver)):
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("launcher", path)
    launcher = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launcher)

    a, b = torch.ones(1000), torch.empty(1000)
    launcher.call({"scale_kernel": 1234}, a, b, 2.5, 1000, stream=7)
    (launch,) = recorded
    assert launcher._function_names == ["scale_kernel"] and launch["func"] == ("function", 1234)
    assert launch["grid"] == (8, 1, 1) and launch["block"] == (128, 1, 1) and launch["smem"] == 512
    assert launch["stream"] == 7 and launch["values"] == (a.data_ptr(), b.data_ptr(), 1000, 2.5)
    assert launch["types"] == (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_float)
    with pytest.raises(ValueError, match="expected 4 arguments"):
        launcher.call({}, a, b)
    with pytest.raises(ValueError, match="matches no kernel argument"):
        wrapper.generate_launcher(launches, ["X", "Y", "s", "N"])
    with pytest.raises(ValueError, match="'min' cannot be a Python parameter name"):
        wrapper.generate_launcher(launches, ["A", "B", "s", "min"])
    assert "eval(" not in source and "exec(" not in source  # extents are generated code, not evaluated text


def test_nvrtc_compiles_the_lowered_kernel():
    pytest.importorskip("cuda.bindings.nvrtc", reason="needs cuda-python")
    from tvm.target import Target

    from tilelang_cuda.adapters.nvrtc.libgen import NVRTCLibraryGenerator
    from tilelang_cuda.adapters.nvrtc.wrapper import TLNVRTCSourceWrapper

    func, art = _lowered()
    import tvm

    target = Target({"kind": "cuda", "arch": "sm_80"})
    wrapped = TLNVRTCSourceWrapper(tvm.IRModule({"scale": func}), art.kernel_source, target, art.device_mod,
                                   art.host_mod).wrap()
    assert wrapped["function_names"] == ["scale_kernel"]
    generator = NVRTCLibraryGenerator(target)
    generator.update_lib_code(art.kernel_source)
    generator.update_host_func(wrapped["host_func"])
    try:
        cubin = generator.compile_lib()
    except Exception as exc:  # cuda-python without the NVRTC library
        if "libnvrtc" in str(exc):
            pytest.skip(f"NVRTC library not found: {exc}")
        raise
    with open(cubin, "rb") as f:
        assert f.read(4) == b"\x7fELF"
    assert generator.import_from_file("kernel", generator.pypath)._function_names == ["scale_kernel"]
