"""The 2:4-sparse wgmma dialect (sm_90a): ``T.ptx_wgmma_sp_ss`` (A and B through descriptors) and
``T.ptx_wgmma_sp_rs`` (compressed A in registers).

Hand-written kernels lay the compressed A and B out in the canonical non-swizzled K-major 8x8 core matrices,
assemble each thread's metadata register in the ``mma.sp`` m16n8k32 layout, and run one wgmma.sp per K step of
32 (the first with scale-d 0). They run through the SIMT emulator's ``wgmma.sp`` model against torch's dense
product and are built by nvcc to a cubin whose PTX holds ``wgmma.mma_async.sp``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc
from test_gemm_sp import compress, semi_sparse

import tilelang
import tilelang.language as T
from tilelang.errors import TileLangError

SM90A = {"kind": "cuda", "arch": "sm_90a"}
TL = {torch.float16: (T.float16, "fp16"), torch.bfloat16: (T.bfloat16, "bf16")}


def _core(rows: int, r: int, k: int) -> int:
    """Element index of (r, k) in a K-major tile of 8x8 core matrices (``rows`` rows; 128 bytes per core matrix,
    core matrices adjacent along rows 128 bytes apart (SBO), along K ``rows * 16`` bytes apart (LBO))."""
    return ((k // 8) * (rows // 8) + r // 8) * 64 + (r % 8) * 8 + k % 8


def sparse_wgmma_kernel(form: str, N: int, K: int, dtype: torch.dtype, sel: int = 0, scale_in_a: int = 1):
    """C (64 x N, fp32) = decompress(A_sparse, E) @ B.T, B given N x K (K-major); ``form`` "ss" or "rs"."""
    dt, abbrv = TL[dtype]
    M, steps, half = 64, K // 32, K // 2

    @T.prim_func
    def kernel(A: T.Tensor((M, half), dt), E: T.Tensor((M, K // 16), T.int16), B: T.Tensor((N, K), dt),
               C: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((M * half,), dt)
            b_s = T.alloc_shared((N * K,), dt)
            a_l = T.alloc_local((steps * 8,), dt)
            e_l = T.alloc_local((steps,), T.uint32)
            c_l = T.alloc_local((N // 2,), T.float32)
            desc_a = T.alloc_wgmma_desc()
            desc_b = T.alloc_wgmma_desc()
            tx = T.get_thread_binding()
            w, g, t = tx // 32, (tx % 32) // 4, tx % 4
            for i in T.serial(M * half // 128):
                a_s[_core(M, (i * 128 + tx) // half, (i * 128 + tx) % half)] = A[(i * 128 + tx) // half,
                                                                               (i * 128 + tx) % half]
            for i in T.serial(N * K // 128):
                b_s[_core(N, (i * 128 + tx) // K, (i * 128 + tx) % K)] = B[(i * 128 + tx) // K, (i * 128 + tx) % K]
            for s in T.serial(steps):
                for i in T.serial(8):  # the k16 wgmma A fragment of the compressed columns 16s..16s+15
                    a_l[s * 8 + i] = A[16 * w + g + 8 * ((i // 2) % 2), 16 * s + 2 * t + i % 2 + 8 * (i // 4)]
                e_l[s] = T.bitwise_or(
                    T.bitwise_and(T.Cast(T.uint32, E[16 * w + g, 2 * s + t % 2]), T.uint32(0xFFFF)),
                    T.shift_left(T.Cast(T.uint32, E[16 * w + g + 8, 2 * s + t % 2]), T.uint32(16)))
            T.fence_proxy_async()
            T.sync_threads()
            T.initialize_wgmma_descriptor(desc_a, T.access_ptr(a_s[0], "r"), 0, M, 8)
            T.initialize_wgmma_descriptor(desc_b, T.access_ptr(b_s[0], "r"), 0, N, 8)
            T.warpgroup_arrive()
            for s in T.unroll(steps):
                if form == "ss":
                    T.ptx_wgmma_sp_ss(T.float32, f"m64n{N}k32", True, True, abbrv, abbrv, "fp32", desc_a[0],
                                      s * M * 16 * 2 // 16, e_l, s, sel, desc_b[0], s * N * 32 * 2 // 16, c_l, 0,
                                      T.Cast(T.int32, s > 0), scale_in_a, 1)
                else:
                    T.ptx_wgmma_sp_rs(T.float32, f"m64n{N}k32", True, abbrv, abbrv, "fp32", a_l, s * 8, e_l, s,
                                      sel, desc_b[0], s * N * 32 * 2 // 16, c_l, 0, T.Cast(T.int32, s > 0),
                                      scale_in_a, 1)
            T.warpgroup_commit_batch()
            T.warpgroup_wait(0)
            for j in T.serial(N // 8):
                for r in T.serial(4):
                    C[16 * w + g + 8 * (r // 2), 8 * j + 2 * t + r % 2] = c_l[4 * j + r]

    return kernel


def lower(kernel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(kernel, target=SM90A)


def operands(N: int, K: int, dtype: torch.dtype, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    a, keep = semi_sparse(64, K, dtype, gen)
    a_sp, e = compress(a, keep, torch.int16)
    b = torch.randn(N, K, generator=gen).to(dtype)
    return a, a_sp, e, b


@pytest.mark.parametrize("form", ["ss", "rs"])
@pytest.mark.parametrize("dtype,N,K", [(torch.float16, 16, 64), (torch.bfloat16, 8, 32)])
def test_sparse_wgmma_matches_the_dense_product(form, dtype, N, K):
    art = lower(sparse_wgmma_kernel(form, N, K, dtype))
    assert f"tl_wgmma_sp_{form}_m64n{N}k32_" in art.kernel_source
    a, a_sp, e, b = operands(N, K, dtype)
    c = torch.full((64, N), float("nan"))  # scale-d 0 on the first step: the accumulators' old values never count
    stats = emulate(art, a_sp, e, b, c)
    assert stats["wgmma"] == K // 32
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("form", ["ss", "rs"])
def test_sparse_wgmma_reads_the_metadata(form):
    art = lower(sparse_wgmma_kernel(form, 16, 64, torch.float16))
    a, a_sp, e, b = operands(16, 64, torch.float16, seed=3)
    c = torch.zeros(64, 16)
    emulate(art, a_sp, e.roll(1, 0), b, c)  # metadata of other rows
    assert not torch.allclose(c.double(), a.double() @ b.double().T, atol=1e-2)


@needs_nvcc
@pytest.mark.parametrize("form", ["ss", "rs"])
def test_nvcc_builds_sparse_wgmma(form):
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(lower(sparse_wgmma_kernel(form, 16, 64, torch.float16)))
    assert binary.cubin
    assert "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16" in binary.ptx


@pytest.mark.parametrize("form", ["ss", "rs"])
def test_sparse_wgmma_names_what_it_does_not_emit(form):
    with pytest.raises(TileLangError, match="sparsity selector 1"):
        lower(sparse_wgmma_kernel(form, 16, 64, torch.float16, sel=1))
    with pytest.raises(TileLangError, match="scale_in_a"):
        lower(sparse_wgmma_kernel(form, 16, 64, torch.float16, scale_in_a=-1))


def test_sparse_wgmma_needs_sm90a():
    with pytest.raises(TileLangError, match="wgmma"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tilelang.lower(sparse_wgmma_kernel("ss", 16, 64, torch.float16), target={"kind": "cuda", "arch": "sm_80"})
