"""`WGSparseTensorCoreIntrinEmitter`: hand-written 2:4-sparse ``wgmma.mma_async.sp`` GEMMs (sm_90a).

A one-warpgroup kernel stages the compressed A and B (N x K, K-major) in swizzled shared tiles by TMA, the
metadata E by a copy, and issues the emitter's `wgmma_ss` (A through a descriptor) or `wgmma_rs` (A from
registers); the SIMT emulator's ``wgmma.sp`` model checks it against torch's dense product, and nvcc builds it
for sm_90a.
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
from tilelang.layout.swizzle import make_full_bank_swizzled_layout, make_half_bank_swizzled_layout

TL = {torch.float16: T.float16, torch.bfloat16: T.bfloat16}


def emitter_kernel(form: str, N: int, K: int, dtype: torch.dtype):
    from tilelang.cuda.intrinsics.macro.wgmma_sp_macro_generator import WGSparseTensorCoreIntrinEmitter

    dt = TL[dtype]
    em = WGSparseTensorCoreIntrinEmitter(a_dtype=dt, e_dtype=T.int16, b_dtype=dt, accum_dtype=T.float32,
                                         b_transposed=True, block_row_warps=4, block_col_warps=1, warp_row_tiles=16,
                                         warp_col_tiles=N, warp_k=K)
    a_layout = make_full_bank_swizzled_layout if K == 128 else make_half_bank_swizzled_layout
    steps = K // 32

    @T.prim_func
    def kernel(A: T.Tensor((64, K // 2), dt), E: T.Tensor((64, K // 16), T.int16), B: T.Tensor((N, K), dt),
               C: T.Tensor((64, N), T.float32)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((64, K // 2), dt)
            e_s = T.alloc_shared((64, K // 16), T.int16)
            b_s = T.alloc_shared((N, K), dt)
            a_l = T.alloc_local((steps * 8,), dt)
            c_l = T.alloc_local((em.accum_regs,), T.float32)
            T.annotate_layout({a_s: a_layout(a_s), b_s: make_full_bank_swizzled_layout(b_s)})
            em._assign_a_shared_layout(a_layout(a_s))
            em._assign_b_shared_layout(make_full_bank_swizzled_layout(b_s))
            bar = T.alloc_barrier([128])
            tx = T.get_thread_binding()
            w, g, t = tx // 32, (tx % 32) // 4, tx % 4
            if form == "ss":  # TMA writes the swizzled tiles (rs: A from registers)
                T.tma_copy(A, a_s, barrier=bar[0])
            T.tma_copy(B, b_s, barrier=bar[0])
            T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            T.copy(E, e_s)
            for s in T.serial(steps):
                for i in T.serial(8):  # the k16 wgmma A fragment of the compressed columns 16s..
                    a_l[s * 8 + i] = A[16 * w + g + 8 * ((i // 2) % 2), 16 * s + 2 * t + i % 2 + 8 * (i // 4)]
            T.sync_threads()
            if form == "ss":
                em.wgmma_ss(a_s, e_s, b_s, c_l, clear_accum=True)
            else:
                em.wgmma_rs(a_l, e_s, b_s, c_l, clear_accum=True)
            em.stmatrix(c_l, C)

    return kernel


def lower(kernel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(kernel, target={"kind": "cuda", "arch": "sm_90a"})


@pytest.mark.parametrize("form", ["ss", "rs"])
@pytest.mark.parametrize("dtype,N,K", [(torch.float16, 16, 128), (torch.bfloat16, 32, 128)])
def test_the_wgmma_sp_emitter_matches_the_dense_product(form, dtype, N, K):
    art = lower(emitter_kernel(form, N, K, dtype))
    assert f"tl_wgmma_sp_{form}_m64n{N}k32_" in art.kernel_source
    gen = torch.Generator().manual_seed(2)
    a, keep = semi_sparse(64, K, dtype, gen)
    a_sp, e = compress(a, keep, torch.int16)
    b = torch.randn(N, K, generator=gen).to(dtype)
    c = torch.full((64, N), float("nan"))
    stats = emulate(art, a_sp, e, b, c)
    assert stats["wgmma"] == K // 32
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, atol=1e-3, rtol=1e-3)


@needs_nvcc
@pytest.mark.parametrize("form", ["ss", "rs"])
def test_nvcc_builds_the_wgmma_sp_emitter_kernel(form):
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(lower(emitter_kernel(form, 16, 128, torch.float16)))
    assert binary.cubin
    assert "wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.f16.f16" in binary.ptx


def test_the_wgmma_sp_emitter_names_what_it_does_not_emit():
    from tilelang.cuda.intrinsics.macro.wgmma_sp_macro_generator import WGSparseTensorCoreIntrinEmitter

    with pytest.raises(ValueError, match="float16 / bfloat16 A into a float32"):
        WGSparseTensorCoreIntrinEmitter(a_dtype="int8", e_dtype="int32", accum_dtype="int32", warp_row_tiles=16,
                                        warp_col_tiles=16, warp_k=64)
    em = WGSparseTensorCoreIntrinEmitter(a_dtype="float16", e_dtype="int16", accum_dtype="float32",
                                         block_row_warps=4, block_col_warps=1, warp_row_tiles=16, warp_col_tiles=64,
                                         warp_k=64)
    assert (em.wgmma_prefix, em.local_size_a, em.local_size_e, em.accum_regs) == ("m64n64k32", 8, 2, 32)
