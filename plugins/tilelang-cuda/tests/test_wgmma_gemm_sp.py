"""``T.wgmma_gemm_sp``: the explicit 2:4-sparse GEMM that must lower to ``wgmma.mma_async.sp`` (sm_90a).

A tiled kernel (64 x 64 blocks, K steps of 64) runs through the SIMT emulator against torch's dense product of
the decompressed A and is built by nvcc; targets and operands wgmma.sp cannot serve are refused, not lowered to
``mma.sp``.
"""

from __future__ import annotations

import re
import warnings

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc
from test_gemm_sp import compress, semi_sparse

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

TL = {torch.float16: T.float16, torch.bfloat16: T.bfloat16, torch.int8: T.int8}
ACC = {torch.float16: T.float32, torch.bfloat16: T.float32, torch.int8: T.int32}


def kernel(M, N, K, dtype, bm=64, bn=64, bk=64, runtime_clear=False):
    dt, acc, ef = TL[dtype], ACC[dtype], 16 if dtype != torch.int8 else 32

    @T.prim_func
    def wgmma_sp(A: T.Tensor((M, K // 2), dt), E: T.Tensor((M, K // ef), "int16" if ef == 16 else "int32"),
                 B: T.Tensor((K, N), dt), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a_s = T.alloc_shared((bm, bk // 2), dt)
            e_s = T.alloc_shared((bm, bk // ef), "int16" if ef == 16 else "int32")
            b_s = T.alloc_shared((bk, bn), dt)
            c_l = T.alloc_fragment((bm, bn), acc)
            T.fill(c_l, 1e4 if runtime_clear else 0)  # a missed runtime clear would leave 1e4 in C
            for k in T.serial(T.ceildiv(K, bk)):
                T.copy(A[by * bm, k * bk // 2], a_s)
                T.copy(E[by * bm, k * bk // ef], e_s)
                T.copy(B[k * bk, bx * bn], b_s)
                if runtime_clear:
                    T.wgmma_gemm_sp(a_s, e_s, b_s, c_l, clear_accum=k == 0)
                else:
                    T.wgmma_gemm_sp(a_s, e_s, b_s, c_l)
                T.wait_wgmma(0)
            T.copy(c_l, C[by * bm, bx * bn])

    return wgmma_sp


def lower(k, arch="sm_90a"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(k, target={"kind": "cuda", "arch": arch})


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_wgmma_gemm_sp_matches_the_dense_product(dtype):
    M, N, K = 64, 64, 128
    art = lower(kernel(M, N, K, dtype))
    assert re.search(r"\btl_wgmma_sp_m64n\d+k32_\w+\(\(", art.kernel_source)
    gen = torch.Generator().manual_seed(0)
    a, keep = semi_sparse(M, K, dtype, gen)
    a_sp, e = compress(a, keep, torch.int16)
    b = torch.randn(K, N, generator=gen).to(dtype)
    c = torch.zeros(M, N)
    stats = emulate(art, a_sp, e, b, c)
    assert stats["wgmma"] > 0
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-3, rtol=1e-3)


@needs_nvcc
def test_nvcc_builds_wgmma_gemm_sp():
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(lower(kernel(64, 64, 128, torch.float16)))
    assert binary.cubin
    assert re.search(r"wgmma\.mma_async\.sp\.sync\.aligned\.m64n\d+k32\.f32\.f16\.f16", binary.ptx)


def test_wgmma_gemm_sp_refuses_a_target_without_wgmma():
    with pytest.raises(TileLangError, match=r"T\.wgmma_gemm_sp\(\) requires Hopper WGMMA"):
        lower(kernel(64, 64, 128, torch.float16), arch="sm_80")


def test_wgmma_gemm_sp_refuses_operands_wgmma_sp_does_not_serve():
    with pytest.raises(TileLangError, match=r"does not lower to wgmma\.mma_async\.sp"):
        lower(kernel(64, 64, 128, torch.int8))  # int8 sparse: mma.sp only


def test_wgmma_gemm_sp_checks_shapes():
    with pytest.raises(TileLangError, match="T.wgmma_gemm_sp shape mismatch"):
        @T.prim_func
        def bad(A: T.Tensor((64, 32), T.float16), E: T.Tensor((64, 4), T.int16), B: T.Tensor((128, 64), T.float16)):
            with T.Kernel(1, threads=128):
                c_l = T.alloc_fragment((64, 64), T.float32)
                T.wgmma_gemm_sp(A, E, B, c_l)


def test_a_runtime_clear_accum_zeroes_c_where_it_holds():
    """``clear_accum=(k == 0)`` in the K loop: C is cleared in the first iteration (it was refused before)."""
    M, N, K = 64, 64, 128
    art = lower(kernel(M, N, K, torch.float16, runtime_clear=True))
    gen = torch.Generator().manual_seed(1)
    a, keep = semi_sparse(M, K, torch.float16, gen)
    a_sp, e = compress(a, keep, torch.int16)
    b = torch.randn(K, N, generator=gen).to(torch.float16)
    c = torch.zeros(M, N)
    emulate(art, a_sp, e, b, c)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-3, rtol=1e-3)


