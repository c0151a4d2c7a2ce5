"""The ROCm plugin as installed: hip alias, mcpu normalisation, code objects through the registry."""

from __future__ import annotations

import warnings

import pytest

from tilelang.backend import determine_target, plugins, resolve_execution_backend
from tilelang.errors import ExecutionBackendUnavailable, TargetError, ToolchainMissing
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu


def test_entry_points_serve_rocm_and_hip():
    assert {ep.kind for ep in plugins.entry_points() if ep.package == "tilelang_rocm"} == {"rocm", "hip"}


def test_hip_is_an_alias_of_rocm_and_mcpu_is_checked():
    expected = {"kind": "rocm", "mcpu": "gfx90a", "thread_warp_size": 64}
    assert determine_target({"kind": "hip", "mcpu": "gfx90a"}) == expected
    assert determine_target({"kind": "rocm", "mcpu": "gfx942:sramecc+:xnack-"})["mcpu"] == "gfx942"
    with pytest.raises(TargetError, match="not a gfx name"):
        determine_target({"kind": "rocm", "mcpu": "mi300"})


def test_code_object_or_a_clear_toolchain_error():
    from tilelang_rocm.backend import find_ld_lld

    target = {"kind": "rocm", "mcpu": "gfx942"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if find_ld_lld() is None:
            with pytest.raises(ToolchainMissing, match="apt-get install lld"):
                build_through_registry(vector_add_gpu(), target)
            return
        _, device_modules = build_through_registry(vector_add_gpu(), target)
    asm = device_modules[0].inspect_source("asm")
    assert "amdgcn" in asm and "vector_add_kernel" in asm


def test_without_a_gpu_execution_says_why():
    from tilelang_rocm.target import detect

    if detect() is not None:
        pytest.skip("an AMD GPU is present")
    with pytest.raises(ExecutionBackendUnavailable, match="no AMD GPU"):
        resolve_execution_backend({"kind": "rocm", "mcpu": "gfx942"})
