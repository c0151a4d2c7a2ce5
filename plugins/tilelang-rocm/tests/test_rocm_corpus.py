"""Every corpus kernel builds to a gfx942 and a gfx90a code object (hsaco) through the plugin's codegen."""

from __future__ import annotations

import warnings

import pytest

import tilelang
from tilelang.testing.corpus import CORPUS
from tilelang_rocm.compiler import ELF_MAGIC, finalize

EM_AMDGPU = 224
GEMMS = ("gemm_nn", "gemm_nt", "gemm_tn", "gemm_relu", "gemm_fragment_a", "quickstart_lazy", "quickstart_eager",
         "flash_attention")


def build(name: str, mcpu: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(CORPUS[name]().prim_func(), target={"kind": "rocm", "mcpu": mcpu})
    return finalize(artifact)


@pytest.mark.parametrize("mcpu", ["gfx942", "gfx90a"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_kernel_builds_a_code_object(name, mcpu, lld22):
    artifact = build(name, mcpu)
    hsaco = artifact.files["kernel.hsaco"]
    assert hsaco[:4] == ELF_MAGIC and int.from_bytes(hsaco[18:20], "little") == EM_AMDGPU
    asm = artifact.kernel_source
    assert asm.split("\n", 1)[0].endswith(f'{mcpu}"')  # .amdgcn_target "amdgcn-amd-amdhsa--<mcpu>"
    (usage,) = artifact.metadata["resources"].values()
    assert usage["vgpr"] > 0 and usage["sgpr"] > 0 and usage["wavefront_size"] == 64
    assert usage["lds_bytes"] <= 64 * 1024
    if name in GEMMS:
        assert "v_mfma" in asm


def test_rdna3_gemm_uses_wmma(lld22):
    artifact = build("gemm_nn", "gfx1100")
    assert "v_wmma_f32_16x16x16_f16" in artifact.kernel_source
    assert artifact.metadata["resources"]["gemm_kernel"]["wavefront_size"] == 32


def test_atomics_link_the_device_library(lld22):
    """tl_atomic_* helpers are linked in (ld.lld runs with --no-undefined) and inlined into atomics."""
    asm = build("atomic_scalar", "gfx942").kernel_source
    assert "global_atomic" in asm
