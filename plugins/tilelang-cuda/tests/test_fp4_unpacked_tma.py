"""Packed FP4 operands of Blackwell's block-scaled MMA, compiled for sm_100a:

- ``T.tma_copy`` from a packed ``T.float4_e2m1fn`` tensor into a ``T.float4_e2m1_unpacked`` shared tile is a TMA load
  through a ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`` map (cuda.h: 16 packed 4-bit values land as 8 bytes and an
  8-byte gap; dims count 4-bit values, the innermost box is 128 of them, strides are 32-byte multiples): the map
  token carries the data type to the launch, whose encoding counts the packed bytes of the torch tensor as two
  values each; the mbarrier expects the packed payload (half a byte per value); the tile takes one byte per value;
- ``T.tcgen05_gemm_blockscaled`` on such a tile is ``tcgen05.mma.kind::mxf8f6f4.block_scale`` with A's format
  E2M1 (5) in bits 7-9 of the instruction descriptor;
- what has no such form is refused: an unpacking store, boxes not 128 values wide, a packed FP4 tile as an MMA
  operand, element accesses to an unpacked tile, a target without tcgen05.
"""

from __future__ import annotations

import re

import pytest
from cuda_helpers import needs_nvcc
from test_tcgen05_pair_blockscaled import blockscaled_gemm

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError, TileLangError

SM100 = {"kind": "cuda", "arch": "sm_100a"}


def fp4_fp8_gemm():
    """A CTA pair's MXFP4 x MXFP8 GEMM in the shape of the reference's DeepSeek-V4 example: A packed FP4 (M, K)
    loaded unpacked, B FP8 (N, K), UE8M0 scale factors four per word, transposed by warp 2."""
    return blockscaled_gemm(True, a_dtype=T.float4_e2m1fn, b_k_major=True)


def fp4_load(box_k=128, K=256, shared="unpacked", store=False, read=False):
    """One TMA load of packed FP4 rows into a shared tile (optionally a store back, or an element read)."""
    sdtype = T.float4_e2m1_unpacked if shared == "unpacked" else shared

    @T.prim_func
    def k(A: T.Tensor((128, K), T.float4_e2m1fn), B: T.Tensor((128, K), T.float4_e2m1fn),
          Out: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, box_k), sdtype)
            bar = T.alloc_barrier([1])
            T.tma_copy(A[0:128, 0:box_k], A_s, barrier=bar[0])
            T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            if store:
                T.tma_copy(A_s, B[0:128, 0:box_k])
            if read:
                Out[T.get_thread_binding()] = T.cast(A_s[T.get_thread_binding(), 0], "float32")
    return k


def _lower(func, target=None):
    return tilelang.lower(func, target=target or SM100)


# ------------------------------------------------------------------------------------------------ the load
def test_unpacking_load_uses_a_16u4_align16b_map():
    art = _lower(fp4_fp8_gemm())
    maps = art.metadata["tma_maps"]
    # A: 128 rows x 128 FP4 values a box, in the tile's 128-byte swizzle, data type 16U4_ALIGN16B (14)
    assert maps["tl_tmap_A_b128x128_s3_t14"] == {"buffer": "A", "box": [128, 128], "swizzle": 3, "data_type": 14}
    assert "data_type" not in maps["tl_tmap_B_b128x128_s3"]  # the FP8 operand keeps its dtype's map
    src = art.kernel_source
    assert "const __grid_constant__ tl_tensor_map_t tl_tmap_A_b128x128_s3_t14" in src
    # the barrier expects the packed payload: 128 x 128 values at half a byte (B: 128 x 128 FP8 bytes)
    a_load = re.search(r"tl_mbarrier_expect_tx\([^;]*, (\d+)\);\s*tl_tma_copy_load_2d\(\(&tl_tmap_A_", src)
    b_load = re.search(r"tl_mbarrier_expect_tx\([^;]*, (\d+)\);\s*tl_tma_copy_load_2d\(\(&tl_tmap_B_", src)
    assert a_load and int(a_load.group(1)) == 8192
    assert b_load and int(b_load.group(1)) == 16384
    assert "float4_e2m1_unpacked" not in src.split('extern "C" __global__')[-1]  # a byte tile in the kernel


def test_unpacked_tile_takes_one_byte_per_value():
    from tilelang.backend.sdk import dtype_bytes

    assert dtype_bytes("custom[float4_e2m1_unpacked]") == 1 == dtype_bytes("custom[float4_e2m1_unpacked]8")
    src = _lower(fp4_load()).kernel_source
    # the 128 x 128 tile: 16384 bytes, the TMA load expects the 8192 packed bytes
    assert re.search(r"tl_mbarrier_expect_tx\([^;]*, 8192\);", src)
    assert "tl_tmap_A_b128x128_s0_t14" in src


def test_encode_arguments_of_a_16u4_align16b_map():
    from tilelang_cuda.tma import encode_arguments

    # torch holds packed FP4 as int8 bytes: (M, K / 2) for M x K values
    args = encode_arguments((256, 512), (512, 1), "int8", 1, [128, 128], 3, 14)
    assert args["data_type"] == 14
    assert args["global_dim"] == [1024, 256]  # innermost first, in 4-bit values
    assert args["global_strides"] == [512]  # bytes
    assert args["box_dim"] == [128, 128] and args["swizzle"] == 3 and args["element_strides"] == [1, 1]
    assert encode_arguments((256, 512), (512, 1), "uint8", 1, [128, 128], 0, 14)["global_dim"] == [1024, 256]


@pytest.mark.parametrize("case, match", [
    (dict(shape=(256, 48), strides=(48, 1)), "multiple of 128 values"),
    (dict(shape=(256, 64), strides=(80, 1)), "32-byte aligned"),
    (dict(box=[128, 64]), "exactly 128 values"),
    (dict(swizzle=2), "swizzle none, 128B or 128B_ATOM_32B"),
    (dict(dtype="float16", element_bytes=2), "packed FP4 bytes"),
])
def test_encode_arguments_refuses_what_16u4_align16b_cannot_map(case, match):
    from tilelang_cuda.tma import encode_arguments

    a = dict(shape=(256, 512), strides=(512, 1), dtype="int8", element_bytes=1, box=[128, 128], swizzle=3)
    a.update(case)
    with pytest.raises(TileLangError, match=match):
        encode_arguments(a["shape"], a["strides"], a["dtype"], a["element_bytes"], a["box"], a["swizzle"], 14)


# ------------------------------------------------------------------------------------------------ the MMA
def test_blockscaled_descriptor_has_a_in_e2m1():
    src = _lower(fp4_fp8_gemm()).kernel_source
    mma = re.search(r"tl_tcgen05_mma_bs_mxf8f6f4_cg2\([^;]*?\(\(\(uint\)(\d+) \|", src)
    assert mma, "no block-scaled pair MMA"
    d = int(mma.group(1))
    assert (d >> 7) & 7 == 5 and (d >> 10) & 7 == 0  # A E2M1, B E4M3
    assert (d >> 15) & 1 == 0 and (d >> 16) & 1 == 0  # both K-major (B transposed)
    assert ((d >> 17) & 0x3F) << 3 == 256 and ((d >> 24) & 0x1F) << 4 == 256 and (d >> 23) & 1 == 1
    # one K32 step is 32 bytes of the unpacked tile: descriptors advance by 2 x 16 bytes within a 128-byte row
    assert len(re.findall(r"tl_tcgen05_mma_bs_mxf8f6f4_cg2\(", src)) == 4

    from tilelang_cuda.tileops.dialect.tensorcore import blockscaled_descriptor

    d = blockscaled_descriptor(128, 256, "custom[float4_e2m1_unpacked]", "custom[float4_e2m1_unpacked]", True, True)
    assert (d >> 7) & 7 == 5 and (d >> 10) & 7 == 5


@needs_nvcc
def test_fp4_gemm_compiles_to_block_scale_pair_mmas():
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(_lower(fp4_fp8_gemm())).ptx
    assert "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "tcgen05.alloc.cta_group::2" in ptx


# ------------------------------------------------------------------------------------------------ refusals
def test_unpacking_store_is_refused():
    with pytest.raises(LoweringError, match="only on loads"):
        _lower(fp4_load(store=True))


def test_unpacking_box_must_be_128_values_wide():
    with pytest.raises(LoweringError, match="exactly 128 values wide"):
        _lower(fp4_load(box_k=64))


def test_other_conversions_stay_refused():
    with pytest.raises(LoweringError, match="TMA does not convert; the one converting copy"):
        _lower(fp4_load(shared="float8_e4m3fn"))


def test_element_reads_of_an_unpacked_tile_are_refused():
    with pytest.raises(LoweringError, match="element by element"):
        _lower(fp4_load(read=True))


def test_unpacking_load_needs_blackwell():
    with pytest.raises(LoweringError, match="sm_100a-family"):
        _lower(fp4_load(), {"kind": "cuda", "arch": "sm_90a"})


def test_packed_fp4_tile_is_not_an_mma_operand():
    @T.prim_func
    def k(A: T.Tensor((128, 128), "uint8")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 128), T.float4_e2m1fn)
            B_s = T.alloc_shared((128, 128), "float8_e4m3fn")
            C_tmem = T.alloc_tmem([128, 128], "float32")
            SFA_tmem = T.alloc_tmem([128, 4], "uint32")
            SFB_tmem = T.alloc_tmem([128, 4], "uint32")
            bar = T.alloc_barrier([1])
            T.tcgen05_gemm_blockscaled(A_s, B_s, C_tmem, SFA_tmem, SFB_tmem, transpose_B=True, mbar=bar[0], k_start=0,
                                       sf_a_granularity_k=128, sf_b_granularity_k=128)

    with pytest.raises(LoweringError, match="T.float4_e2m1_unpacked"):
        _lower(k)
