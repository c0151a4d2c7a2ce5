"""GEMM dtypes per GPU: bf16 on the bf16 MFMA (CDNA) / WMMA (RDNA3) instructions, fp32 on CDNA's fp32 MFMA and,
on RDNA3 (no fp32 WMMA), core's FMA lowering. Checked in the assembly of the built code objects."""

from __future__ import annotations

import re
import warnings

import pytest

import tilelang
from tilelang.testing.corpus import gemm
from tilelang_rocm.compiler import ELF_MAGIC, finalize
from tilelang_rocm.matrix_cores import MFMA_BF16, WMMA_BF16, matrix_core

_BUILT: dict[tuple[str, str], object] = {}


def build(dtype: str, mcpu: str):
    if (dtype, mcpu) not in _BUILT:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            artifact = tilelang.lower(gemm(dtype=dtype).prim_func(), target={"kind": "rocm", "mcpu": mcpu})
        _BUILT[dtype, mcpu] = finalize(artifact)
    return _BUILT[dtype, mcpu]


def matrix_ops(asm: str) -> set[str]:
    return set(re.findall(r"\bv_(?:mfma|wmma)_\w+", asm))


@pytest.mark.parametrize("mcpu, instruction", [("gfx942", "v_mfma_f32_16x16x16_bf16"),
                                               ("gfx90a", "v_mfma_f32_16x16x16bf16_1k"),
                                               ("gfx1100", "v_wmma_f32_16x16x16_bf16")])
def test_bf16_gemm_uses_the_bf16_matrix_instruction(mcpu, instruction, lld22):
    artifact = build("bfloat16", mcpu)
    assert artifact.files["kernel.hsaco"][:4] == ELF_MAGIC
    assert matrix_ops(artifact.kernel_source) == {instruction}
    usage = artifact.metadata["resources"]["gemm_kernel"]
    assert usage["vgpr"] > 0 and usage["sgpr"] > 0 and usage["lds_bytes"] > 0
    assert usage.get("vgpr_spills", 0) == 0 and usage["scratch_bytes"] == 0


def test_fp32_gemm_on_rdna3_falls_back_to_fma(lld22):
    artifact = build("float32", "gfx1100")
    asm = artifact.kernel_source
    assert artifact.files["kernel.hsaco"][:4] == ELF_MAGIC
    assert not matrix_ops(asm)  # gfx11 has no fp32 WMMA
    assert re.search(r"\bv_(?:fmac|fma|pk_fma)_f32(?:_e32|_e64)?\s", asm)
    usage = artifact.metadata["resources"]["gemm_kernel"]
    assert usage["wavefront_size"] == 32 and usage["scratch_bytes"] == 0


def test_fp32_gemm_on_cdna_uses_fp32_mfma(lld22):
    assert matrix_ops(build("float32", "gfx942").kernel_source) == {"v_mfma_f32_16x16x4_f32"}


def test_instruction_table():
    assert matrix_core("gfx942", "bfloat16") is MFMA_BF16 and matrix_core("gfx90a", "bfloat16") is MFMA_BF16
    assert matrix_core("gfx1100", "bfloat16") is WMMA_BF16
    assert matrix_core("gfx908", "bfloat16") is None  # the bf16 ".1k" MFMA starts with gfx90a
    assert matrix_core("gfx1100", "float32") is None
    assert MFMA_BF16.bits_dtype == "int16" and MFMA_BF16.operand_dtype == "bfloat16"
