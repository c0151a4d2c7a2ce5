"""2:4 structured-sparse GEMM (``T.gemm_sp``) on sparse tensor cores: ``mma.sp::ordered_metadata`` (sm_80+) and
``wgmma.mma_async.sp`` (fp16/bf16 on sm_90a).

Kernels are lowered for sm_80 and sm_90a, run through the SIMT emulator (whose ``mma.sp`` model is written from
the PTX ISA fragment and metadata layouts) against torch's dense product of the decompressed A, and built by nvcc
to a cubin whose PTX must hold the sparse instruction. GPU runs carry the ``gpu`` marker.
"""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pytest
import torch
from cuda_emulator import EmulationError, emulate, mma_sp
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang_cuda.intrinsics.sparse_layout import get_e_factor

TL = {torch.float8_e4m3fn: T.float8_e4m3fn, torch.float8_e5m2: T.float8_e5m2, torch.float16: T.float16,
      torch.bfloat16: T.bfloat16, torch.int8: T.int8, torch.float32: T.float32, torch.int32: T.int32,
      torch.int16: T.int16}


def gemm_sp_kernel(M, N, K, bm, bn, bk, dtype, e_dtype, acc, trans_a=False, trans_b=False, threads=128, stages=2,
                   a_fragment=False):
    ef = get_e_factor(dtype, e_dtype)
    a_shape, as_shape = ((K // 2, M), (bk // 2, bm)) if trans_a else ((M, K // 2), (bm, bk // 2))
    e_shape, es_shape = ((K // ef, M), (bk // ef, bm)) if trans_a else ((M, K // ef), (bm, bk // ef))
    b_shape, bs_shape = ((N, K), (bn, bk)) if trans_b else ((K, N), (bk, bn))

    @T.prim_func
    def gemm_sp(A: T.Tensor(a_shape, dtype), E: T.Tensor(e_shape, e_dtype), B: T.Tensor(b_shape, dtype),
                C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=threads) as (bx, by):
            a_s = T.alloc_shared(as_shape, dtype)
            e_s = T.alloc_shared(es_shape, e_dtype)
            b_s = T.alloc_shared(bs_shape, dtype)
            a_f = T.alloc_fragment(as_shape, dtype)
            c_l = T.alloc_fragment((bm, bn), acc)
            T.clear(c_l)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                if trans_a:
                    T.copy(A[k * bk // 2, by * bm], a_s)
                    T.copy(E[k * bk // ef, by * bm], e_s)
                else:
                    T.copy(A[by * bm, k * bk // 2], a_s)
                    T.copy(E[by * bm, k * bk // ef], e_s)
                if trans_b:
                    T.copy(B[bx * bn, k * bk], b_s)
                else:
                    T.copy(B[k * bk, bx * bn], b_s)
                if a_fragment:  # A read from a fragment (staged back to shared by the lowering)
                    T.copy(a_s, a_f)
                    T.gemm_sp(a_f, e_s, b_s, c_l, trans_a, trans_a, trans_b)
                else:
                    T.gemm_sp(a_s, e_s, b_s, c_l, trans_a, trans_a, trans_b)
            T.copy(c_l, C[by * bm, bx * bn])

    return gemm_sp


def semi_sparse(M: int, K: int, dtype: torch.dtype, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A random M x K matrix with two nonzeros in every group of four along K, and those positions (M, K/4, 2)."""
    x = torch.randint(-4, 5, (M, K), generator=gen).float() if dtype == torch.int8 else torch.randn(M, K, generator=gen)
    keep = torch.rand(M, K // 4, 4, generator=gen).argsort(-1)[..., :2].sort(-1).values
    mask = torch.zeros(M, K // 4, 4, dtype=torch.bool).scatter_(-1, keep, True)
    x = torch.where(mask.view(M, K) & (x == 0), torch.ones_like(x), x)  # the kept values are nonzero
    return (x.view(M, K // 4, 4) * mask).view(M, K).to(dtype), keep


def compress(dense: torch.Tensor, keep: torch.Tensor, e_dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """``(A_sparse, E)``: the kept values (M x K/2) and row-major metadata, each 4-bit chunk the two kept indices of
    a group of four (bits 1:0, 3:2), chunks packed little-endian into `e_dtype` elements."""
    M, K = dense.shape
    raw = dense.view(torch.uint8) if dense.element_size() == 1 and dense.dtype != torch.int8 else dense  # fp8
    vals = raw.view(M, K // 4, 4).gather(-1, keep).reshape(M, K // 2).view(dense.dtype)
    chunks = (keep[..., 0] | (keep[..., 1] << 2)).to(torch.int64)
    bits = torch.iinfo(e_dtype).bits
    c = chunks.view(M, -1, bits // 4)
    word = torch.zeros(M, c.shape[1], dtype=torch.int64)
    for i in range(bits // 4):
        word |= c[..., i] << (4 * i)
    word = torch.where(word >= 2 ** (bits - 1), word - 2 ** bits, word)
    return vals, word.to(e_dtype)


CALL = re.compile(r"\btl_mma_sp_\w+\(\(")  # a call of the mma.sp helper (the header defines them all)
WG_CALL = re.compile(r"\btl_wgmma_sp_m64n\d+k32_\w+\(\(")
ACC = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.int8: torch.int32,
       torch.float8_e4m3fn: torch.float32, torch.float8_e5m2: torch.float32}
CASES = {  # name: (M, N, K, bm, bn, bk, dtype, e_dtype, trans_a, trans_b[, A from a fragment])
    "f16_e16": (64, 64, 128, 64, 64, 64, torch.float16, torch.int16, False, False),
    "f16_e8": (32, 32, 128, 32, 32, 64, torch.float16, torch.int8, False, False),
    "f16_e32": (32, 32, 128, 32, 32, 64, torch.float16, torch.int32, False, False),
    "bf16_e16": (32, 32, 128, 32, 32, 64, torch.bfloat16, torch.int16, False, False),
    "f16_tb": (32, 32, 64, 32, 32, 32, torch.float16, torch.int16, False, True),
    "f16_ta": (32, 32, 64, 32, 32, 32, torch.float16, torch.int16, True, False),
    "f16_ta_tb": (32, 32, 64, 32, 32, 32, torch.float16, torch.int16, True, True),
    "bf16_64": (64, 32, 128, 64, 32, 64, torch.bfloat16, torch.int8, False, True),
    "f16_64_ta": (64, 32, 64, 64, 32, 32, torch.float16, torch.int32, True, False),
    "f16_64_a_frag": (64, 32, 64, 64, 32, 32, torch.float16, torch.int16, False, True, True),
    "s8_e32": (32, 32, 128, 32, 32, 64, torch.int8, torch.int32, False, True),
    "s8_e16": (32, 32, 128, 32, 32, 64, torch.int8, torch.int16, False, True),
    "e4m3_e32": (32, 32, 128, 32, 32, 64, torch.float8_e4m3fn, torch.int32, False, True),
    "e5m2_e32": (32, 32, 128, 32, 32, 64, torch.float8_e5m2, torch.int32, False, True),
}
FP8 = ("e4m3_e32", "e5m2_e32")  # sm_89+ (tested on sm_90a)


@functools.cache
def lowered(name: str, arch: str):
    M, N, K, bm, bn, bk, dt, et, ta, tb, *a_frag = CASES[name]
    kernel = gemm_sp_kernel(M, N, K, bm, bn, bk, TL[dt], TL[et], TL[ACC[dt]], ta, tb, a_fragment=bool(a_frag))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(kernel, target={"kind": "cuda", "arch": arch})


def operands(name: str, seed: int = 0):
    M, N, K, _, _, _, dt, et, ta, tb, *_ = CASES[name]
    gen = torch.Generator().manual_seed(seed)
    a, keep = semi_sparse(M, K, dt, gen)
    a_sp, e = compress(a, keep, et)
    b = (torch.randint(-4, 5, (K, N), generator=gen).float() if dt == torch.int8 else torch.randn(K, N, generator=gen))
    b = b.to(dt)
    ref = a.double() @ b.double()
    if ta:
        a_sp, e = a_sp.t().contiguous(), e.t().contiguous()
    if tb:
        b = b.t().contiguous()
    return a_sp, e, b, torch.zeros(M, N, dtype=ACC[dt]), ref


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", list(CASES))
def test_gemm_sp_lowers_to_mma_sp_and_matches_dense_product(name, arch):
    if name in FP8 and arch == "sm_80":
        pytest.skip("fp8 mma.sp needs sm_89")
    art = lowered(name, arch)
    # wgmma.sp: fp16/bf16 on sm_90a with 64-row blocks per warpgroup (128 threads: bm a multiple of 64)
    wgmma = arch == "sm_90a" and CASES[name][6] in (torch.float16, torch.bfloat16) and CASES[name][3] % 64 == 0
    assert (WG_CALL if wgmma else CALL).search(art.kernel_source)
    a_sp, e, b, c, ref = operands(name)
    stats = emulate(art, a_sp, e, b, c)
    assert stats.get("wgmma" if wgmma else "mma_sp", 0) > 0
    torch.testing.assert_close(c.double(), ref, atol=1e-3, rtol=1e-3)


def test_wrong_metadata_gives_a_wrong_product():
    """The emulator reads the metadata: E shifted by one group no longer reproduces the dense product."""
    art = lowered("f16_e16", "sm_80")
    a_sp, e, b, c, ref = operands("f16_e16")
    rolled = torch.roll(e, 1, dims=1)
    emulate(art, a_sp, rolled, b, c)
    assert not torch.allclose(c.double(), ref, atol=1e-3)


def test_the_mma_sp_model_against_the_ptx_fragment_text():
    """`mma_sp` per lane from the PTX ISA text: m16n8k32 f16, A compressed 16 x 16, metadata from lanes t < 2."""
    rng = np.random.default_rng(0)
    keep = np.sort(np.argsort(rng.random((16, 8, 4)), -1)[..., :2], -1)
    vals = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    dense = np.zeros((16, 32))
    for r in range(16):
        for j in range(8):
            dense[r, 4 * j + keep[r, j, 0]] = vals[r, 2 * j]
            dense[r, 4 * j + keep[r, j, 1]] = vals[r, 2 * j + 1]
    B = rng.integers(-3, 4, (32, 8)).astype(np.float16)
    a, b, e = [], [], []
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        a.append(np.asarray([vals[g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >= 4)] for i in range(8)],
                            np.float16).view(np.uint32))
        b.append(np.asarray([B[2 * t + (i & 1) + 8 * (i >> 1), g] for i in range(8)], np.float16).view(np.uint32))
        word = 0
        if t < 2:
            for half, row in enumerate((g, g + 8)):
                for j in range(4):
                    chunk = keep[row, 4 * t + j, 0] | (keep[row, 4 * t + j, 1] << 2)
                    word |= int(chunk) << (16 * half + 4 * j)
        e.append(word)
    d = mma_sp("f16", np.stack(a), np.stack(b), np.asarray(e, np.uint64), np.zeros((32, 4), np.float32))
    want = dense @ B.astype(np.float64)
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        got = [want[g + 8 * (i >= 2), 2 * t + (i & 1)] for i in range(4)]
        np.testing.assert_allclose(d[lane], got)
    bad = np.asarray(e, np.uint64)
    bad[0] = 0  # first group: both indices 0
    with pytest.raises(EmulationError, match="increasing"):
        mma_sp("f16", np.stack(a), np.stack(b), bad, np.zeros((32, 4), np.float32))


def test_unsupported_shapes_keep_the_generic_lowering():
    """An 8-column tile (no 16-column warp tile) keeps core's generic gemm_sp: still correct, no mma.sp."""
    kernel = gemm_sp_kernel(32, 8, 64, 32, 8, 64, T.float16, T.int16, T.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(kernel, target={"kind": "cuda", "arch": "sm_80"})
    assert not CALL.search(art.kernel_source)


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("name", ["f16_e16", "bf16_e16", "s8_e32", "f16_ta_tb", "e5m2_e32", "bf16_64"])
def test_nvcc_builds_mma_sp(name, arch):
    if name in FP8 and arch == "sm_80":
        pytest.skip("fp8 mma.sp needs sm_89")
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(lowered(name, arch))
    assert binary.cubin
    if arch == "sm_90a" and name.startswith(("f16", "bf16")) and CASES[name][3] % 64 == 0:
        assert re.search(r"wgmma\.mma_async\.sp\.sync\.aligned\.m64n\d+k32\.f32", binary.ptx)
        return
    shape = "m16n8k32" if name.startswith(("f16", "bf16")) else "m16n8k64"
    assert f"mma.sp::ordered_metadata.sync.aligned.{shape}" in binary.ptx


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["f16_e16", "bf16_e16", "s8_e32", "f16_ta_tb"])
def test_gemm_sp_on_the_gpu(name):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    M, N, K, bm, bn, bk, dt, et, ta, tb, *_ = CASES[name]
    kernel = tilelang.compile(gemm_sp_kernel(M, N, K, bm, bn, bk, TL[dt], TL[et], TL[ACC[dt]], ta, tb),
                              target="cuda")
    a_sp, e, b, c, ref = operands(name)
    a_sp, e, b, c = (x.cuda() for x in (a_sp, e, b, c))
    kernel(a_sp, e, b, c)
    torch.testing.assert_close(c.double().cpu(), ref, atol=1e-2, rtol=1e-2)


def test_the_mma_sp_class_is_registered_for_sm80_and_newer():
    import tilelang_cuda.op  # noqa: F401 -- registers the CUDA classes
    from tilelang.tileop.gemm_sp.registry import resolve_gemm_sp_impl
    from tilelang_cuda.op.gemm_sp import GemmSPMMA, GemmSPWGMMA
    from tilelang_cuda.tileops.gemm_sp import GEMM_SP

    assert resolve_gemm_sp_impl("cuda.mma.sp", {"kind": "cuda", "arch": "sm_80"}) is GemmSPMMA
    assert GemmSPMMA.tile_op_impl() is GEMM_SP
    assert not GemmSPMMA.matches({"kind": "cuda", "arch": "sm_75"})
    assert resolve_gemm_sp_impl("cuda.wgmma.sp", {"kind": "cuda", "arch": "sm_90a"}) is GemmSPWGMMA
    assert GemmSPWGMMA.tile_op_impl() is GEMM_SP
    assert not GemmSPWGMMA.matches({"kind": "cuda", "arch": "sm_80"})

    class _Ctx:  # a tl.gemm_sp call whose accumulator the pass laid out for mma.sp (instr 0)
        args = [None] * 9 + [64, 32, 4, 1, 0]

    with pytest.raises(ValueError, match="not laid out for wgmma.sp"):
        GemmSPWGMMA().lower(_Ctx())


def test_wgmma_sp_reads_the_metadata():
    """On sm_90a (wgmma.sp) a shifted E no longer reproduces the dense product either."""
    art = lowered("f16_e16", "sm_90a")
    a_sp, e, b, c, ref = operands("f16_e16")
    emulate(art, a_sp, torch.roll(e, 1, dims=1), b, c)
    assert not torch.allclose(c.double(), ref, atol=1e-3)


def emitter_kernel(M, N, K, dtype, e_dtype, acc, warp_rows=1, warp_cols=1, block_k=64):
    """A hand-written sparse GEMM through `SparseTensorCoreIntrinEmitter` (one block of 2 x 2 warps)."""
    from tilelang.cuda.intrinsics.macro.mma_sp_macro_generator import SparseTensorCoreIntrinEmitter

    ef = get_e_factor(dtype, e_dtype)
    em = SparseTensorCoreIntrinEmitter(a_dtype=dtype, e_dtype=e_dtype, b_dtype=dtype, accum_dtype=acc,
                                       b_transposed=True, block_row_warps=2, block_col_warps=2,
                                       warp_row_tiles=M // 2, warp_col_tiles=N // 2, warp_k=block_k)
    steps = block_k // em.micro_size_k

    @T.prim_func
    def gemm_sp_emitter(A: T.Tensor((M, K // 2), dtype), E: T.Tensor((M, K // ef), e_dtype),
                        B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(1, 1, threads=128):
            a_s = T.alloc_shared((M, block_k // 2), dtype)
            e_s = T.alloc_shared((M, block_k // ef), e_dtype)
            b_s = T.alloc_shared((N, block_k), dtype)
            a_l = T.alloc_local((em.warp_rows * em.local_size_a,), dtype)
            e_l = T.alloc_local((em.warp_rows * em.local_size_e,), e_dtype)
            b_l = T.alloc_local((em.warp_cols * em.local_size_b,), dtype)
            c_l = T.alloc_local((em.warp_rows * em.warp_cols * em.local_size_out,), acc)
            for r in T.serial(em.warp_rows * em.warp_cols * em.local_size_out):
                c_l[r] = 0
            for ko in T.serial(K // block_k):
                T.copy(A[0, ko * block_k // 2], a_s)
                T.copy(E[0, ko * block_k // ef], e_s)
                T.copy(B[0, ko * block_k], b_s)
                for ki in T.serial(steps):
                    em.ldmatrix_a(a_l, a_s, ki)
                    em.ldmatrix_e(e_l, e_s, ki)
                    em.ldmatrix_b(b_l, b_s, ki)
                    em.mma_sp(a_l, e_l, b_l, c_l)
            em.stmatrix(c_l, C)

    return gemm_sp_emitter


@pytest.mark.parametrize("dt,et,K", [(torch.float16, torch.int16, 128), (torch.bfloat16, torch.int8, 64),
                                     (torch.int8, torch.int32, 128), (torch.int8, torch.int8, 128)])
def test_the_sparse_emitter_matches_the_dense_product(dt, et, K):
    M, N = 32, 32
    kernel = emitter_kernel(M, N, K, TL[dt], TL[et], TL[ACC[dt]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(kernel, target={"kind": "cuda", "arch": "sm_80"})
    assert CALL.search(art.kernel_source)
    gen = torch.Generator().manual_seed(1)
    a, keep = semi_sparse(M, K, dt, gen)
    a_sp, e = compress(a, keep, et)
    b = (torch.randint(-4, 5, (N, K), generator=gen).float() if dt == torch.int8 else torch.randn(N, K, generator=gen))
    b = b.to(dt)
    c = torch.zeros(M, N, dtype=ACC[dt])
    stats = emulate(art, a_sp, e, b, c)
    assert stats["mma_sp"] > 0
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, atol=1e-3, rtol=1e-3)


def test_the_sparse_emitter_names_unsupported_operands():
    from tilelang.cuda.intrinsics.macro.mma_sp_macro_generator import SparseTensorCoreIntrinEmitter

    with pytest.raises(ValueError, match="float32"):
        SparseTensorCoreIntrinEmitter(a_dtype="float32", e_dtype="int16", b_dtype="float32", accum_dtype="float32",
                                      warp_row_tiles=16, warp_col_tiles=16)
    with pytest.raises(ValueError, match="metadata of int32"):
        SparseTensorCoreIntrinEmitter(a_dtype="float16", e_dtype="int32", accum_dtype="float32",
                                      warp_row_tiles=16, warp_col_tiles=16)
    em = SparseTensorCoreIntrinEmitter(a_dtype="float16", e_dtype="int16", accum_dtype="float32",
                                       warp_row_tiles=16, warp_col_tiles=16, warp_k=32)
    assert (em.mma_prefix, em.local_size_a, em.local_size_e, em.local_size_b) == ("m16n8k32", 8, 2, 16)


@needs_nvcc
def test_nvcc_builds_the_sparse_emitter_kernel():
    from tilelang_cuda.compiler import compile_artifact

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(emitter_kernel(32, 32, 128, T.float16, T.int16, T.float32),
                             target={"kind": "cuda", "arch": "sm_80"})
    assert "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32" in compile_artifact(art).ptx


def test_ptx_mma_sp_names_a_selector_it_does_not_emit():
    from tilelang.errors import TileLangError

    @T.prim_func
    def bad(C: T.Tensor((32, 4), T.float32)):
        with T.Kernel(1, threads=32):
            a = T.alloc_local((8,), T.float16)
            b = T.alloc_local((8,), T.float16)
            e = T.alloc_local((2,), T.int16)
            c = T.alloc_local((4,), T.float32)
            T.ptx_mma_sp(T.float32, "m16n8k32", "row", "col", "fp16", "fp16", "fp32", a, 0, b, 0, c, 0, e, 0, 1)
            C[T.get_thread_binding(), 0] = c[0]

    with pytest.raises(TileLangError, match="sparsity selector 1"):
        tilelang.lower(bad, target={"kind": "cuda", "arch": "sm_80"})
