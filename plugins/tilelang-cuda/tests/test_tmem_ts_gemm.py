"""16-bit tensor-memory tiles, ``T.copy`` into tensor memory (``tcgen05.st``) and the TS ``tcgen05.mma`` (A read
from TMEM), as the reference's Blackwell flash attention uses them (``P_tmem``: the softmax's probabilities in
bf16, the second GEMM's A operand). Executed by the SIMT emulator against torch; the PTX is checked too."""

from __future__ import annotations

import re

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

TARGET = {"kind": "cuda", "arch": "sm_100a"}


def _two_gemms(block_n: int, dim: int, dtype: str = "bfloat16"):
    """``O = O0 + cast(S * 0.5) @ V`` with ``S = Q @ K^T``: S in TMEM (SS MMA), P in a 16-bit TMEM tile written from
    a fragment, O in TMEM preloaded from a fragment and accumulated by the TS MMA."""

    @T.prim_func
    def main(Q: T.Tensor((128, dim), dtype), K: T.Tensor((block_n, dim), dtype), V: T.Tensor((block_n, dim), dtype),
             O0: T.Tensor((128, dim), "float32"), Out: T.Tensor((128, dim), "float32")):
        with T.Kernel(1, threads=128):
            Q_shared = T.alloc_shared((128, dim), dtype)
            K_shared = T.alloc_shared((block_n, dim), dtype)
            V_shared = T.alloc_shared((block_n, dim), dtype)
            S_tmem = T.alloc_tmem([128, block_n], "float32")
            P_tmem = T.alloc_tmem([128, block_n], dtype)
            O_tmem = T.alloc_tmem([128, dim], "float32")
            S_reg = T.alloc_fragment((128, block_n), "float32")
            P_cast = T.alloc_fragment((128, block_n), dtype)
            O_reg = T.alloc_fragment((128, dim), "float32")
            done = T.alloc_barrier([1])
            T.copy(Q, Q_shared)
            T.copy(K, K_shared)
            T.copy(V, V_shared)
            T.copy(O0, O_reg)
            T.copy(O_reg, O_tmem)
            T.fence_proxy_async()
            T.tcgen05_gemm(Q_shared, K_shared, S_tmem, transpose_B=True, mbar=done, clear_accum=True)
            T.mbarrier_wait_parity(done, 0)
            T.copy(S_tmem, S_reg)
            for i, j in T.Parallel(128, block_n):
                S_reg[i, j] = S_reg[i, j] * 0.5
            T.copy(S_reg, P_cast)
            T.copy(P_cast, P_tmem)
            T.tcgen05_gemm(P_tmem, V_shared, O_tmem, mbar=done, clear_accum=False)
            T.mbarrier_wait_parity(done, 1)
            T.copy(O_tmem, O_reg)
            T.copy(O_reg, Out)

    return main


@pytest.mark.parametrize("block_n,dim", [(64, 64), (128, 32)])
def test_ts_gemm_reads_a_bf16_tile_written_into_tensor_memory(block_n, dim):
    art = tilelang.lower(_two_gemms(block_n, dim), target=TARGET)
    src = art.kernel_source
    assert "tl_tcgen05_mma_ts(" in src and "tl_tcgen05_st_32x32b_n(" in src
    torch.manual_seed(0)
    q, k, v = (torch.randn(r, dim).to(torch.bfloat16) for r in (128, block_n, block_n))
    o0 = torch.randn(128, dim)
    out = torch.zeros(128, dim)
    stats = emulate(art, q, k, v, o0, out)
    p = (0.5 * (q.float() @ k.float().t())).to(torch.bfloat16).float()
    torch.testing.assert_close(out, o0 + p @ v.float(), rtol=2e-2, atol=2e-2)
    # S: dim / 16 k-steps; O: block_n / 16 k-steps reading A from TMEM
    assert stats["tcgen05_mma"] == dim // 16 + block_n // 16


@needs_nvcc
def test_nvcc_builds_the_ts_mma_and_the_tensor_memory_stores():
    ptx = tilelang.compile(_two_gemms(64, 64), target=TARGET).export_ptx()
    body = ptx.split(".entry", 1)[1]
    # A from TMEM: the operand in brackets; stores into TMEM waited for before the fence
    assert re.search(r"tcgen05\.mma\.cta_group::1\.kind::f16 \[%r\d+\], \[%r\d+\], %rd\d+", body)
    assert "tcgen05.st.sync.aligned.32x32b" in body and "tcgen05.wait::st.sync.aligned" in body


def test_tensor_memory_before_sm100_is_refused():
    func = _two_gemms(64, 64)
    with pytest.raises(LoweringError):
        tilelang.lower(func, target={"kind": "cuda", "arch": "sm_90a"})  # no tensor memory before sm_100


def test_a_tmem_tile_of_8_bit_values_is_refused():
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128):
            P = T.alloc_tmem([128, 64], "float8_e4m3fn")
            f = T.alloc_fragment((128, 64), "float8_e4m3fn")
            T.copy(A, f)
            T.copy(f, P)

    with pytest.raises(LoweringError, match=r"TMEM tile P: 32-bit values .* or 16-bit ones"):
        tilelang.lower(main, target=TARGET)
