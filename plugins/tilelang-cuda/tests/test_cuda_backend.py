"""The CUDA plugin as installed: target normalisation, CUDA C through the registry, nvcc to cubin."""

from __future__ import annotations

import shutil
import subprocess
import warnings

import pytest

from tilelang.backend import determine_target, plugins, resolve_execution_backend
from tilelang.errors import ExecutionBackendUnavailable, TargetError
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu


def test_entry_point_serves_cuda():
    assert {ep.kind for ep in plugins.entry_points() if ep.package == "tilelang_cuda"} == {"cuda", "cutedsl"}


def test_arch_is_kept_checked_and_defaulted_with_a_notice():
    assert determine_target({"kind": "cuda", "arch": "sm_90a"})["arch"] == "sm_90a"
    assert determine_target({"kind": "cuda", "arch": "sm_80"})["arch"] == "sm_80"
    with pytest.raises(TargetError, match="sm_XY"):
        determine_target({"kind": "cuda", "arch": "volta"})
    from tilelang_cuda.target import detect

    if detect() is None:
        with pytest.warns(UserWarning, match="compiling for sm_80"):
            assert determine_target("cuda")["arch"] == "sm_80"


def test_tilelang_cuda_alias():
    import tilelang.cuda.codegen
    import tilelang_cuda.codegen

    assert tilelang.cuda.codegen is tilelang_cuda.codegen


@pytest.fixture(scope="module")
def cuda_source():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, device_modules = build_through_registry(vector_add_gpu(1024, 128), {"kind": "cuda", "arch": "sm_80"})
    return device_modules[0].inspect_source()


def test_registry_codegen_emits_cuda_c(cuda_source):
    assert 'extern "C" __global__' in cuda_source and "vector_add_kernel" in cuda_source


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_nvcc_compiles_the_source_to_cubin(cuda_source, arch, tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(cuda_source)
    from tilelang_cuda.intrinsics import include_dir  # the helper headers the source includes

    subprocess.run(["nvcc", "-cubin", f"-arch={arch}", "-O3", f"-I{include_dir()}", "-o", str(tmp_path / "k.cubin"),
                    str(src)],
                   check=True, capture_output=True, timeout=300)
    assert (tmp_path / "k.cubin").read_bytes()[:4] == b"\x7fELF"


def test_without_a_gpu_execution_says_why():
    from tilelang_cuda.target import detect

    if detect() is not None:
        pytest.skip("a GPU is present")
    with pytest.raises(ExecutionBackendUnavailable, match="no CUDA GPU"):
        resolve_execution_backend({"kind": "cuda", "arch": "sm_80"})


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_jit_kernel_without_a_gpu_exports_ptx_and_resources(tmp_path, monkeypatch):
    import tilelang
    from tilelang.testing import corpus

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    kernel = corpus.CORPUS["gemm_nn"]()
    jit = tilelang.compile(kernel.func, out_idx=kernel.out_idx, target={"kind": "cuda", "arch": "sm_80"})
    assert "mma.sync.aligned" in jit.export_ptx() and "ldmatrix" in jit.export_ptx()
    assert jit.artifact.files["kernel.cubin"][:4] == b"\x7fELF"
    assert jit.artifact.metadata["registers"] > 0
