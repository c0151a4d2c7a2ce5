"""``T.initialize_tcgen05_descriptor`` with the fields the reference 0.1.15 encodes beyond start / LBO / SBO /
swizzle: the matrix base offset (``base_offset & 7`` at bits 49-51) and the leading-dimension mode
(``leading_is_absolute`` at bit 52), next to the version bit 46. The descriptor words come out of the SIMT emulator
(which models the helper) and the kernel compiles for sm_100a with nvcc. ``T.tcgen05_gemm_sp`` builds and fails
to lower with the reference's error (it has no sparse TCGEN5MMA lowering either)."""

from __future__ import annotations

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T

SM100 = {"kind": "cuda", "arch": "sm_100a"}


def descriptor_kernel(lbo, sbo, swizzle, base_offset, absolute):
    @T.prim_func
    def k(Out: T.Tensor((1,), "int64")):
        with T.Kernel(1, threads=32):
            A_s = T.alloc_shared((128, 64), "bfloat16")
            desc = T.alloc_tcgen05_smem_desc()
            T.initialize_tcgen05_descriptor(desc, T.access_ptr(A_s[0, 0], "r"), lbo, sbo, base_offset=base_offset,
                                            leading_is_absolute=absolute, swizzle_mode=swizzle)
            if T.get_thread_binding() == 0:
                Out[0] = T.Cast("int64", desc[0])

    return k


@pytest.mark.parametrize("base_offset, absolute", [(0, False), (3, False), (0, True), (7, True)])
def test_base_offset_and_leading_mode_land_in_their_bits(base_offset, absolute):
    out = torch.zeros(1, dtype=torch.int64)
    emulate(tilelang.lower(descriptor_kernel(1, 64, 2, base_offset, absolute), target=SM100), out)
    d = int(out[0]) & (1 << 64) - 1
    assert (d >> 16) & 0x3FFF == 1 and (d >> 32) & 0x3FFF == 64  # LBO / SBO in 16-byte units
    assert (d >> 46) & 7 == 1 and (d >> 61) & 7 == 2  # version, 128B swizzle
    assert (d >> 49) & 7 == base_offset and (d >> 52) & 1 == int(absolute)


@needs_nvcc
def test_the_based_descriptor_compiles_for_sm100a():
    from tilelang_cuda.compiler import compile_artifact

    art = tilelang.lower(descriptor_kernel(1, 64, 2, 3, True), target=SM100)
    assert "tl_umma_desc_based(" in art.kernel_source and ", 2, 3, 1)" in art.kernel_source
    assert compile_artifact(art).ptx
    plain = tilelang.lower(descriptor_kernel(1, 64, 2, 0, False), target=SM100).kernel_source
    assert "tl_umma_desc_based" not in plain  # the default fields keep the plain helper


def test_base_offset_is_a_3_bit_field():
    with pytest.raises(ValueError, match="base_offset is a 3-bit field"):
        descriptor_kernel(1, 64, 2, 8, False)


# ------------------------------------------------------------------------------------------------ T.tcgen05_gemm_sp
@pytest.mark.parametrize("arch", ["sm_100a", "sm_90a"])
def test_tcgen05_gemm_sp_builds_and_fails_to_lower_like_the_reference(arch):
    """The reference 0.1.15 has no sparse TCGEN5MMA lowering: the call builds, lowering names that on any target."""
    from tilelang.errors import LoweringError

    @T.prim_func
    def k(A: T.Tensor((128, 64), "float16"), E: T.Tensor((128, 8), "int16"), B: T.Tensor((128, 128), "float16")):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((128, 64), "float16")
            e_s = T.alloc_shared((128, 8), "int16")
            b_s = T.alloc_shared((128, 128), "float16")
            c_l = T.alloc_fragment((128, 128), "float32")
            T.copy(A, a_s)
            T.copy(E, e_s)
            T.copy(B, b_s)
            T.tcgen05_gemm_sp(a_s, e_s, b_s, c_l)

    assert "tcgen05_gemm_sp" in k.script()
    with pytest.raises(LoweringError, match=r"T\.tcgen05_gemm_sp.*requires Blackwell TCGEN5MMA sparse lowering, but "
                                            r"sparse TCGEN5MMA lowering is not yet available.*Got target=cuda -arch="
                                            + arch):
        tilelang.lower(k, target={"kind": "cuda", "arch": arch})
