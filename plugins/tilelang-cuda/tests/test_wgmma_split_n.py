"""Warpgroups side by side along N (sm_90a): an accumulator tile with fewer than 64 rows per warpgroup, or more
than 256 columns, is split over the warpgroups' column slices, each issuing ``wgmma.m64n(N/g)`` -- instead of
falling back to mma.sync. The reference's grid for DeepSeek MLA decode (64 heads over two warpgroups). Emulated
(`cuda_emulator`) and compared with torch."""

from __future__ import annotations

import warnings

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import mla_decode, mla_decode_reference

import tilelang
import tilelang.language as T
from tilelang_cuda.mma_layout import WGMMA, choose

SM90A = {"kind": "cuda", "arch": "sm_90a"}


def test_warpgroups_split_n_only_where_stacking_along_m_is_infeasible():
    assert choose(128, 128, 8, 2, wgmma=True, split_n=True).to_args() == [128, 128, 8, 1, WGMMA]
    assert choose(64, 64, 8, 2, wgmma=True) is None  # without split_n (wgmma.sp): mma.sync decides
    assert choose(64, 64, 8, 2, wgmma=True, split_n=True).to_args() == [64, 64, 4, 2, WGMMA]
    assert choose(64, 512, 8, 2, wgmma=True, split_n=True).to_args() == [64, 512, 4, 2, WGMMA]
    assert choose(128, 512, 16, 2, wgmma=True, split_n=True).to_args() == [128, 512, 8, 2, WGMMA]
    assert choose(64, 1024, 8, 2, wgmma=True, split_n=True) is None  # 512 columns a warpgroup: too wide
    assert choose(64, 24, 8, 2, wgmma=True, split_n=True) is None  # 12 columns a warpgroup: not a multiple of 8


def _gemm(M: int, N: int, K: int, trans_b: bool, a_fragment: bool, dtype: str = "float16"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K) if trans_b else (K, N), dtype),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=256):
            A_s = T.alloc_shared((M, K), dtype)
            B_s = T.alloc_shared((N, K) if trans_b else (K, N), dtype)
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            if a_fragment:
                A_f = T.alloc_fragment((M, K), dtype)
                T.copy(A_s, A_f)
                T.gemm(A_f, B_s, acc, transpose_B=trans_b, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
            else:
                T.gemm(A_s, B_s, acc, transpose_B=trans_b, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
            T.copy(acc, C)

    return gemm


@pytest.mark.parametrize("M,N,K,trans_b,a_fragment,dtype", [
    (64, 64, 64, True, False, "float16"),    # SS, K-major B: two m64n32 slices
    (64, 128, 32, False, False, "float16"),  # SS, MN-major B: two m64n64 slices
    (64, 64, 32, True, True, "float16"),     # RS: A from a fragment, B through its swizzled descriptor
    (64, 512, 32, False, False, "bfloat16"),  # N over 256: two m64n256 slices
    (64, 64, 64, True, False, "float8_e4m3fn"),  # fp8 (K-major both): two m64n32k32 slices
])
def test_split_n_gemm_emulated(M, N, K, trans_b, a_fragment, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_gemm(M, N, K, trans_b, a_fragment, dtype), target=SM90A)
    src = art.kernel_source
    k_atom = 32 if dtype.startswith("float8") else 16
    assert f"m64n{N // 2}k{k_atom}" in src and "tl_mma_" not in src[src.index('extern "C" __global__'):]
    torch_dtype = {"float16": torch.half, "bfloat16": torch.bfloat16, "float8_e4m3fn": torch.float8_e4m3fn}[dtype]
    a = torch.randn(M, K).to(torch_dtype)
    b = (torch.randn(N, K) if trans_b else torch.randn(K, N)).to(torch_dtype)
    c = torch.zeros(M, N)
    stats = emulate(art, a, b, c)
    assert stats["wgmma"] > 0
    ref = a.float() @ (b.float().T if trans_b else b.float())
    torch.testing.assert_close(c, ref, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_mla_decode_shaped_kernel_emulated(arch):
    """MLA decode's structure at a small size (`cuda_helpers.mla_decode`): QK^T into a 64 x block_N score tile and
    P V into a 64 x dim output, both split over two warpgroups along N (sm_90a), a row max / sum across both
    warpgroups' slices between them.
    On sm_80 (mma.sync) FullCol would put the scores on 4 x 2 warps and the output on 1 x 8: both go to 4 x 2 so
    that the row vectors stay in registers (`MMAAccumulators.share_rows`)."""
    heads, seq, dim, pe_dim = 64, 64, 128, 64

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(mla_decode(heads, seq, dim, pe_dim, staged_out=False),
                             target={"kind": "cuda", "arch": arch})
    src = art.kernel_source
    if arch == "sm_90a":
        assert "m64n16k16" in src and "m64n64k16" in src  # both gemms on wgmma, each warpgroup half of N
    assert "m_rows_ptr" in src and "row_partials" in src  # row vectors in registers, warp columns combined
    q, q_pe = torch.randn(heads, dim).half(), torch.randn(heads, pe_dim).half()
    kv, k_pe = torch.randn(seq, dim).half(), torch.randn(seq, pe_dim).half()
    out = torch.zeros(heads, dim).half()
    emulate(art, q, q_pe, kv, k_pe, out)
    torch.testing.assert_close(out.float(), mla_decode_reference(q, q_pe, kv, k_pe), atol=2e-2, rtol=2e-2)
