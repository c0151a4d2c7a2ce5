"""What a ROCm artifact carries: assembly source, hsaco, LLVM IR and resource usage (JIT path included)."""

from __future__ import annotations

import warnings

import pytest

from tilelang_rocm.compiler import resource_usage

ASM_TAIL = """
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     4
    .group_segment_fixed_size: 8192
    .name:           k_kernel
    .private_segment_fixed_size: 16
    .sgpr_count:     20
    .symbol:         k_kernel.kd
    .vgpr_count:     64
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
\t.end_amdgpu_metadata
"""


def test_resource_usage_reads_the_amdhsa_metadata():
    assert resource_usage("\tv_mov_b32 v0, 0\n" + ASM_TAIL) == {"k_kernel": {
        "agpr": 4, "lds_bytes": 8192, "scratch_bytes": 16, "sgpr": 20, "vgpr": 64, "wavefront_size": 64}}


def test_jit_kernel_source_is_assembly_and_hsaco_is_stored(lld22, monkeypatch):
    import tilelang
    from tilelang.testing.corpus import gemv

    monkeypatch.setenv("TILELANG_CACHE_DIR", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel = tilelang.compile(gemv().func, target={"kind": "rocm", "mcpu": "gfx90a"})
    assert kernel.get_kernel_source().lstrip().startswith(".amdgcn_target") or ".amdgcn_target" in \
        kernel.get_kernel_source()[:200]
    artifact = kernel.artifact
    assert artifact.files["kernel.hsaco"][:4] == b"\x7fELF"
    assert artifact.files["kernel.ll"].startswith(b"; ModuleID")
    assert artifact.metadata["resources"]["gemv_kernel"]["vgpr"] > 0


def test_llvm_ir_on_request(lld22, monkeypatch):
    import tilelang
    from tilelang.testing.corpus import gemv
    from tilelang_rocm.compiler import finalize

    monkeypatch.setenv("TILELANG_ROCM_SOURCE", "llvm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = finalize(tilelang.lower(gemv().func, target={"kind": "rocm", "mcpu": "gfx942"}))
    assert artifact.kernel_source.startswith("; ModuleID")


@pytest.mark.parametrize("mcpu, intrinsic", [("gfx90a", "mfma"), ("gfx942", "mfma"), ("gfx950", "mfma"),
                                             ("gfx1100", "wmma"), ("gfx1030", None)])
def test_matrix_core_per_gpu(mcpu, intrinsic):
    from tilelang_rocm.matrix_cores import matrix_core

    core = matrix_core(mcpu, "float16")
    assert (core is None) if intrinsic is None else intrinsic in core.intrinsic
