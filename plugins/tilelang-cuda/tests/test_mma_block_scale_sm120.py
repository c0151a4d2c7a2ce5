"""sm_120 block-scaled ``mma.sync`` (``kind::mxf4nvf4``): the emitter's contract, ``T.ptx_mma_block_scale`` and
``T.mma_gemm_blockscaled`` lowered and compiled by nvcc for sm_120a (the PTX holds the block-scaled MMAs), run by
the SIMT emulator against a dequantized reference, and on a GPU of compute capability 12.0 the same check."""

from __future__ import annotations

import re
import warnings

import pytest
from cuda_helpers import needs_nvcc

import tilelang.language as T
from tilelang.errors import LoweringError

FP4 = "float4_e2m1fn"
BLOCK_SCALE_PTX = "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3"


def _gemm(M, N, K, *, wm=2, wn=2, block_M=128, block_N=128, sf_layout=None, transpose_B=True):
    """A tiled NVFP4 GEMM: fp4 A [M, K], B [N, K], uint32 scale words [rows, K/64] staged per block tile."""
    block_K = K
    words = block_K // 64

    @T.prim_func
    def main(A: T.Tensor((M, K), FP4), B: T.Tensor((N, K), FP4), SFA: T.Tensor((M, K // 64), T.uint32),
             SFB: T.Tensor((N, K // 64), T.uint32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=32 * wm * wn) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), FP4)
            B_shared = T.alloc_shared((block_N, block_K), FP4)
            SFA_shared = T.alloc_shared((block_M, words), T.uint32)
            SFB_shared = T.alloc_shared((block_N, words), T.uint32)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(A[by * block_M, 0], A_shared)
            T.copy(B[bx * block_N, 0], B_shared)
            for i, w in T.Parallel(block_M, words):
                SFA_shared[i, w] = SFA[by * block_M + i, w]
            for j, w in T.Parallel(block_N, words):
                SFB_shared[j, w] = SFB[bx * block_N + j, w]
            T.mma_gemm_blockscaled(A_shared, B_shared, C_local, SFA_shared, SFB_shared, transpose_B=transpose_B,
                                   clear_accum=True, k_start=0, sf_a_granularity_k=16, sf_b_granularity_k=16,
                                   sf_layout=sf_layout)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def _lower(func, arch="sm_120a"):
    import tilelang

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target={"kind": "cuda", "arch": arch})


def _emitter(**kw):
    from tilelang.cuda.language.intrinsics import TensorCoreIntrinEmitterSM120

    args = dict(a_dtype=FP4, b_dtype=FP4, accum_dtype="float32", a_transposed=False, b_transposed=True,
                block_row_warps=2, block_col_warps=2, warp_row_tiles=64, warp_col_tiles=64, chunk=256,
                is_blockscaled=True)
    args.update(kw)
    return TensorCoreIntrinEmitterSM120(**args)


# ------------------------------------------------------------------------------------------------ emitter
def test_blockscaled_emitter_tiles_m16n8k64_atoms():
    e = _emitter()
    assert (e.mma_prefix, e.kind, e.scale_vec_size, e.stype, e.sf_vec_size) == ("m16n8k64", "mxf4nvf4", 4, "ue4m3", 16)
    assert (e.micro_size_x, e.micro_size_y, e.micro_size_k) == (16, 16, 64)
    assert (e.local_size_a, e.local_size_b, e.local_size_out) == (32, 32, 8)
    assert (e.warp_rows, e.warp_cols) == (4, 4)


def test_blockscaled_emitter_names_the_scale_granularity_it_needs():
    e = _emitter()
    with pytest.raises(ValueError, match="cover 16 K elements"):
        e._scale_word_k(0, 0, 32)


def test_interleaved_rows_follow_the_accumulator_layout():
    from tilelang_cuda.mma_layout import AccumulatorLayout

    e = _emitter()
    e.interleave_warp_rows = True
    lay = AccumulatorLayout(128, 128, 2, 2)
    for warp_m in range(2):
        for i in range(4):
            tid = 32 * warp_m  # lane 0 of row warp warp_m, column warp 0
            assert e.atom_row0(warp_m, i) == lay.position(tid, 4 * (i * lay.ni))[0]


def test_sm120_gemm_class_lowers_through_the_block_scaled_tile_op():
    from tilelang.cuda.op.gemm.gemm_mma_sm120 import GemmMMASm120BlockScaled
    from tilelang_cuda.tileops import IMPLS
    from tilelang_cuda.tileops.gemm_blockscaled import GEMM_BLOCKSCALED

    assert GemmMMASm120BlockScaled.tile_op_impl() is GEMM_BLOCKSCALED and GEMM_BLOCKSCALED in IMPLS
    assert GEMM_BLOCKSCALED.op == "tl.mma_gemm_blockscaled"


# ------------------------------------------------------------------------------------------------ T.ptx_mma_block_scale
def test_ptx_mma_block_scale_checks_its_form():
    import tvm

    regs = tvm.tirx.decl_buffer((8,), "uint32", scope="local")
    acc = tvm.tirx.decl_buffer((4,), "float32", scope="local")
    with pytest.raises(ValueError, match="Unsupported SM120 block-scale MMA config"):
        T.ptx_mma_block_scale("float32", "m16n8k64", "row", "col", "mxf8f6f4", 1, "e4m3", "e4m3", "ue8m0", regs, 0,
                              regs, 4, acc, 0, regs[6], regs[7])
    with pytest.raises(ValueError, match="m16n8k64 on e2m1 x e2m1"):
        T.ptx_mma_block_scale("float32", "m16n8k32", "row", "col", "mxf4nvf4", 4, "e2m1", "e2m1", "ue4m3", regs, 0,
                              regs, 4, acc, 0, regs[6], regs[7])


def test_block_scale_helper_is_the_ptx_instruction():
    from tilelang_cuda.intrinsics.mma_sync import block_scale_helper_name, helpers_for

    name = block_scale_helper_name("m16n8k64", "mxf4nvf4", 4, "e2m1", "e2m1", "ue4m3")
    text = helpers_for(f"{name}(c, a, b, sa, sb, 0, 0, 0, 1);")
    assert BLOCK_SCALE_PTX in text and "{%10}, {%11, %12}, {%13}, {%14, %15}" in text
    with pytest.raises(ValueError, match="is not emitted"):
        block_scale_helper_name("m16n8k64", "mxf4nvf4", 2, "e2m1", "e2m1", "ue8m0")


# -------------------------------------------------------------------------------------------- T.mma_gemm_blockscaled
@pytest.mark.parametrize("sf_layout", [None, "blockscaled_chunk_kmajor"])
def test_mma_gemm_blockscaled_lowers_to_block_scaled_mma(sf_layout):
    src = _lower(_gemm(128, 128, 256, sf_layout=sf_layout)).kernel_source
    # per warp: 4 x 4 atoms of two n8 halves, four K blocks
    assert len(re.findall(r"tl_mma_block_scale_m16n8k64_mxf4nvf4_4x_e2m1_e2m1_ue4m3\(\(&", src)) == 128
    assert BLOCK_SCALE_PTX in src


def test_fulltile_path_holds_compact_scale_packages():
    src = _lower(_gemm(128, 128, 256, sf_layout="blockscaled_chunk_kmajor")).kernel_source
    # two packages of two SFA and two SFB words each, the MMAs selecting lanes with thread ids 0..3
    for what in ("SFA", "SFB"):
        assert len(re.findall(rf"uint {what}_pkg\d_ptr\[2\];", src)) == 2
    assert re.search(r"\(ushort\)0, \(ushort\)1, \(ushort\)0, \(ushort\)3\);", src)


def test_mma_gemm_blockscaled_needs_sm120a():
    with pytest.raises(LoweringError, match="sm_120a"):
        _lower(_gemm(128, 128, 128), arch="sm_90a")


def test_mma_gemm_blockscaled_needs_k_major_operands():
    with pytest.raises(LoweringError, match=r"\[N, K\] \(transpose_B=True\)"):
        _lower(_gemm(128, 128, 128, transpose_B=False))


def test_fulltile_path_rejects_an_odd_atom_grid():
    # 96-column warp tiles hold 6 atoms; 48-column ones 3, which a compact package (two atoms a word) cannot pair
    with pytest.raises(LoweringError, match="positive even MMA atom grid"):
        _lower(_gemm(64, 96, 128, wm=2, wn=2, block_M=64, block_N=96, sf_layout="blockscaled_chunk_kmajor"))


def test_unknown_scale_layout_is_named():
    with pytest.raises(ValueError, match="Unsupported SM120 scale layout: cutlass_128x4"):
        _gemm(128, 128, 256, sf_layout="cutlass_128x4")


@needs_nvcc
@pytest.mark.parametrize("sf_layout", [None, "blockscaled_chunk_kmajor"])
def test_nvcc_builds_an_sm120a_cubin_with_block_scaled_mma(sf_layout):
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(_lower(_gemm(128, 128, 256, sf_layout=sf_layout)))
    assert binary.cubin[:4] == b"\x7fELF"
    assert binary.ptx.count("kind::mxf4nvf4.block_scale.scale_vec::4X") == 128


def test_fp4_tile_copy_moves_32_elements_per_16_byte_cp_async():
    @T.prim_func
    def copy(A: T.Tensor((64, 128), FP4), B: T.Tensor((64, 128), FP4)):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, 128), FP4)
            T.copy(A, S)
            T.copy(S, B)

    src = _lower(copy, arch="sm_80").kernel_source
    # 8192 elements = 4 KiB: two 16-byte vectors per thread (16-element vectors read 8 bytes past every row)
    assert len(re.findall(r"tl_cp_async16\(\(", src)) == 2
    assert "((int)threadIdx.x) * 32)" in src


# ------------------------------------------------------------------------------------------------ emulated
_E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def _decode_fp4(packed, rows, cols):
    import torch

    u = packed.view(torch.uint8)
    lut = torch.tensor(_E2M1, device=packed.device)
    out = torch.empty((rows, cols), device=packed.device)
    out[:, 0::2], out[:, 1::2] = lut[(u & 15).long()], lut[(u >> 4).long()]
    return out


def _words(s):
    """ue4m3 bytes [rows, K/16] -> uint32 words [rows, K/64] (byte j of a word: K group j)."""
    import torch

    s = s.to(torch.int64).reshape(s.shape[0], -1, 4)
    w = s[..., 0] | s[..., 1] << 8 | s[..., 2] << 16 | s[..., 3] << 24
    return w.to(torch.int64).to(torch.uint32) if hasattr(torch, "uint32") else w.to(torch.int32)


def _kmajor(w, tile_rows):
    """Row-major words of each `tile_rows`-row tile in BlockScaledBasicChunk K-major order."""
    import torch

    rows, nw = w.shape
    src = w.to(torch.int64)
    out = torch.empty_like(src)
    r = torch.arange(tile_rows)
    for t in range(rows // tile_rows):
        flat = torch.empty(tile_rows * nw, dtype=torch.int64)
        for k in range(nw):
            flat[k * tile_rows + (r % 32) * (tile_rows // 32) + r // 32] = src[t * tile_rows + r, k]
        out[t * tile_rows:(t + 1) * tile_rows] = flat.reshape(tile_rows, nw)
    return out.to(w.dtype)


def _inputs(M, N, K, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    a = torch.randint(-128, 128, (M, K // 2), dtype=torch.int8, generator=g)
    b = torch.randint(-128, 128, (N, K // 2), dtype=torch.int8, generator=g)
    choices = torch.tensor([0x30, 0x38, 0x40, 0x3C])  # ue4m3 0.5, 1, 2, 1.5
    sa = choices[torch.randint(0, 4, (M, K // 16), generator=g)]
    sb = choices[torch.randint(0, 4, (N, K // 16), generator=g)]
    lut = torch.zeros(256, dtype=torch.float32)
    lut[0x30], lut[0x38], lut[0x40], lut[0x3C] = 0.5, 1.0, 2.0, 1.5
    ref = ((_decode_fp4(a, M, K) * lut[sa].repeat_interleave(16, 1))
           @ (_decode_fp4(b, N, K) * lut[sb].repeat_interleave(16, 1)).T)
    return a, b, _words(sa), _words(sb), ref


@pytest.mark.parametrize("sf_layout", [None, "blockscaled_chunk_kmajor"])
def test_emulated_block_scaled_gemm_matches_dequantized_reference(sf_layout):
    """The lowered kernel run by the SIMT emulator (`cuda_emulator`: ldmatrix, cp.async and the block-scaled
    mma modelled from the PTX ISA) against fp32 math on the dequantized operands: every tile, warp, atom, K
    block and scale word lands where it should (exact: products of e2m1 and power-of-two-ish scales)."""
    import torch
    from cuda_emulator import emulate

    M, N, K = 128, 64, 256
    art = _lower(_gemm(M, N, K, block_M=64, block_N=64, sf_layout=sf_layout))
    a, b, sfa, sfb, ref = _inputs(M, N, K)
    if sf_layout == "blockscaled_chunk_kmajor":
        sfa, sfb = _kmajor(sfa, 64), _kmajor(sfb, 64)
    c = torch.zeros((M, N), dtype=torch.float32)
    stats = emulate(art, a, b, sfa, sfb, c)
    assert stats["mma"] > 0
    torch.testing.assert_close(c, ref, rtol=0, atol=0)


# ------------------------------------------------------------------------------------------------ on a GPU
@pytest.mark.gpu
@pytest.mark.parametrize("sf_layout", [None, "blockscaled_chunk_kmajor"])
def test_block_scaled_gemm_matches_dequantized_reference(sf_layout):
    import torch

    import tilelang

    if torch.cuda.get_device_capability() != (12, 0):
        pytest.skip("needs a compute capability 12.0 GPU (sm_120a)")
    M = N = 128
    K = 256
    kernel = tilelang.compile(_gemm(M, N, K, sf_layout=sf_layout), target={"kind": "cuda", "arch": "sm_120a"},
                              out_idx=[4])
    a, b, sfa, sfb, ref = _inputs(M, N, K)
    if sf_layout == "blockscaled_chunk_kmajor":
        sfa, sfb = _kmajor(sfa, 128), _kmajor(sfb, 128)
    c = kernel(a.cuda(), b.cuda(), sfa.cuda(), sfb.cuda())
    torch.testing.assert_close(c.cpu(), ref, rtol=0, atol=0)
