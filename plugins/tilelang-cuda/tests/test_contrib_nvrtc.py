"""tilelang.contrib.nvrtc (tilelang_cuda.contrib.nvrtc) and the NVRTC adapter package without cuda-python;
NVRTC include-path discovery."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tilelang_cuda.adapters import nvrtc as nvrtc_adapter
from tilelang_cuda.adapters.nvrtc.include_paths import discover_cuda_include_paths
from tilelang_cuda.contrib import nvrtc

HAS_CUDA_PYTHON = importlib.util.find_spec("cuda") is not None and nvrtc_adapter.is_nvrtc_available


@pytest.mark.skipif(HAS_CUDA_PYTHON, reason="cuda-python is installed")
def test_without_cuda_python_nvrtc_says_what_to_install():
    with pytest.raises(ImportError, match="pip install cuda-python"):
        nvrtc.compile_cuda('extern "C" __global__ void k() {}', "cubin", arch=80)
    with pytest.raises(ImportError, match="pip install cuda-python"):
        nvrtc.get_nvrtc_version()
    assert nvrtc_adapter.is_nvrtc_available is False
    with pytest.raises(ImportError, match="cuda-python"):
        nvrtc_adapter.check_nvrtc_available()
    for stand_in in (nvrtc_adapter.NVRTCKernelAdapter, nvrtc_adapter.NVRTCLibraryGenerator,
                     nvrtc_adapter.TLNVRTCSourceWrapper):
        with pytest.raises(ImportError, match="cuda-python"):
            stand_in()
    with pytest.raises(ImportError, match="cuda-python"):
        nvrtc_adapter.NVRTCKernelAdapter.from_database()


def test_nvrtc_rejects_bad_arguments_before_compiling():
    with pytest.raises(ValueError, match="cubin or ptx"):
        nvrtc.compile_cuda("", "fatbin", arch=80)
    with pytest.raises(ValueError, match="options"):
        nvrtc.compile_cuda("", "ptx", arch=80, options=42)


def test_nvrtc_kernel_cache_layout():
    from tilelang_cuda.adapters.nvrtc.kernel_cache import NVRTCKernelCache

    assert NVRTCKernelCache.kernel_lib_path == "kernel.cubin" and NVRTCKernelCache.kernel_py_path == "kernel.py"


def test_include_paths_follow_the_layouts_present(tmp_path):
    flat = tmp_path / "include"
    target = tmp_path / "targets" / "sbsa-linux" / "include"
    assert discover_cuda_include_paths(str(tmp_path), machine="aarch64", system="linux") == [
        str(flat), str(target), str(target / "cccl")]
    (target / "cccl").mkdir(parents=True)
    assert discover_cuda_include_paths(str(tmp_path), machine="arm64", system="linux") == [str(target),
                                                                                          str(target / "cccl")]
    flat.mkdir()
    assert discover_cuda_include_paths(str(tmp_path), machine="aarch64", system="linux") == [
        str(flat), str(target), str(target / "cccl")]
    assert discover_cuda_include_paths(str(tmp_path), system="win32") == [str(flat), str(flat / "cccl")]


def test_real_toolkit_headers_are_found():
    from tilelang.env import env

    roots = [r for r in ("/usr/local/cuda", env.CUDA_HOME) if r and os.path.exists(os.path.join(r, "bin"))]
    if not roots:
        pytest.skip("no CUDA toolkit found")
    paths = discover_cuda_include_paths(roots[0])
    assert any(os.path.exists(os.path.join(p, "cuda_fp16.h")) for p in paths)
