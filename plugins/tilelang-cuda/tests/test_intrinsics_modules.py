"""The reference's ``tilelang.cuda.*`` module paths, the intrinsic emitters' tiling, the MMA fragment maps,
the tcgen05 TMEM fragments and the wgmma / tcgen05 shared-memory descriptors, and the CUDA language dialect's
reach into ``tilelang.language``."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
import tvm

import tilelang.language as T
from tilelang.layout.swizzle import (
    make_full_bank_swizzled_layout,
    make_half_bank_swizzled_layout,
    make_quarter_bank_swizzled_layout,
)
from tilelang.layout.swizzle_mode import SwizzleMode

MODULES = """
tilelang.cuda tilelang.cuda.backend tilelang.cuda.codegen tilelang.cuda.cutedsl_backend tilelang.cuda.debug
tilelang.cuda.execution_backend tilelang.cuda.intrinsics tilelang.cuda.intrinsics.layout
tilelang.cuda.intrinsics.layout.mma_layout tilelang.cuda.intrinsics.layout.mma_sm100_layout
tilelang.cuda.intrinsics.layout.mma_sm70_layout tilelang.cuda.intrinsics.layout.mma_sp_layout
tilelang.cuda.intrinsics.layout.utils tilelang.cuda.intrinsics.macro tilelang.cuda.intrinsics.macro.mma_macro_generator
tilelang.cuda.intrinsics.macro.mma_sm120_macro_generator tilelang.cuda.intrinsics.macro.mma_sm70_macro_generator
tilelang.cuda.intrinsics.macro.mma_sm75_macro_generator tilelang.cuda.intrinsics.macro.mma_sp_macro_generator
tilelang.cuda.intrinsics.macro.tcgen05_macro_generator tilelang.cuda.intrinsics.macro.wgmma_macro_generator
tilelang.cuda.intrinsics.macro.wgmma_sp_macro_generator tilelang.cuda.intrinsics.sparse_layout tilelang.cuda.language
tilelang.cuda.language.cluster tilelang.cuda.language.intrinsics tilelang.cuda.language.math tilelang.cuda.language.pdl
tilelang.cuda.language.print tilelang.cuda.language.random tilelang.cuda.language.tir tilelang.cuda.language.warpgroup
tilelang.cuda.op tilelang.cuda.op.gemm tilelang.cuda.op.gemm.gemm_fma tilelang.cuda.op.gemm.gemm_mma
tilelang.cuda.op.gemm.gemm_mma_sm120 tilelang.cuda.op.gemm.gemm_mma_sm70 tilelang.cuda.op.gemm.gemm_mma_sm75
tilelang.cuda.op.gemm.gemm_tcgen05 tilelang.cuda.op.gemm.gemm_wgmma tilelang.cuda.op.gemm_sp
tilelang.cuda.op.gemm_sp.gemm_sp_mma tilelang.cuda.op.gemm_sp.gemm_sp_wgmma tilelang.cuda.pipeline tilelang.cuda.target
tilelang.cuda.transform
""".split()


@pytest.mark.parametrize("name", MODULES)
def test_module_map_paths_import(name):
    importlib.import_module(name)


def test_intrinsics_package_keeps_the_header_api_and_adds_the_reference_names():
    from tilelang.cuda import intrinsics

    for name in ("with_header", "header_for", "wgmma_helper", "wgmma_ss_helper", "HEADER_GUARD",
                 "make_mma_swizzle_layout", "get_swizzle_layout", "TensorCoreIntrinEmitter",
                 "TensorCoreIntrinEmitterWithLadderTransform", "TensorCoreIntrinEmitterSM120",
                 "mma_store_index_map", "get_ldmatrix_offset", "get_mma_micro_size"):
        assert hasattr(intrinsics, name), name


# ------------------------------------------------------------------------------------------------ emitters
def _emitter(cls, a, acc, chunk=32, warp_col_tiles=32):
    return cls(a_dtype=a, b_dtype=a, accum_dtype=acc, a_transposed=False, b_transposed=True, block_row_warps=2,
               block_col_warps=2, warp_row_tiles=32, warp_col_tiles=warp_col_tiles, chunk=chunk)


@pytest.mark.parametrize("a,acc,chunk,prefix,micro,local", [
    ("float16", "float32", 32, "m16n8k16", (16, 16, 16), (8, 8, 8)),
    ("bfloat16", "float32", 32, "m16n8k16", (16, 16, 16), (8, 8, 8)),
    ("float32", "float32", 32, "m16n8k8", (16, 16, 8), (4, 4, 8)),
    ("int8", "int32", 64, "m16n8k32", (16, 16, 32), (16, 16, 8)),
])
def test_sm80_emitter_tiling(a, acc, chunk, prefix, micro, local):
    from tilelang.cuda.intrinsics import TensorCoreIntrinEmitter

    e = _emitter(TensorCoreIntrinEmitter, a, acc, chunk)
    assert e.mma_prefix == prefix
    assert (e.micro_size_x, e.micro_size_y, e.micro_size_k) == micro
    assert (e.local_size_a, e.local_size_b, e.local_size_out) == local
    assert (e.warp_rows, e.warp_cols) == (2, 2)


@pytest.mark.parametrize("a,acc,prefix,micro,local", [
    ("float16", "float32", "m16n8k8", (16, 8, 8), (4, 2, 4)),
    ("int8", "int32", "m8n8k16", (8, 8, 16), (4, 4, 2)),
    ("int4", "int32", "m8n8k32", (8, 8, 32), (8, 8, 2)),
])
def test_sm75_emitter_tiling(a, acc, prefix, micro, local):
    from tilelang.cuda.intrinsics.macro.mma_sm75_macro_generator import TensorCoreIntrinEmitterSM75

    e = _emitter(TensorCoreIntrinEmitterSM75, a, acc, 64)
    assert e.mma_prefix == prefix
    assert (e.micro_size_x, e.micro_size_y, e.micro_size_k) == micro
    assert (e.local_size_a, e.local_size_b, e.local_size_out) == local
    assert e._use_fp64_store_index_map() == (local[2] == 2)


def test_mma_emitters_subclass_cores_warp_matrix_emitter():
    """The sm_80 / sm_75 / sm_70 emitters give lane maps and instructions; the loops are core's."""
    from tilelang.backend.sdk import WarpMatrixEmitter
    from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
    from tilelang.cuda.intrinsics.macro.mma_sm70_macro_generator import TensorCoreIntrinEmitter as Volta

    assert issubclass(TensorCoreIntrinEmitter, WarpMatrixEmitter)
    for cls in (TensorCoreIntrinEmitter, Volta):
        assert not {"stmatrix", "ldmatrix_a", "ldmatrix_b", "get_thread_binding", "extract_thread_binding",
                    "get_store_index_map", "_load"} & set(vars(cls)), cls


def test_unsupported_operand_types_are_named():
    from tilelang.cuda.intrinsics.macro.mma_sm75_macro_generator import TensorCoreIntrinEmitterSM75

    with pytest.raises(ValueError, match="Unsupported dtype: uint4"):
        _emitter(TensorCoreIntrinEmitterSM75, "uint4", "int32", 64)


def test_fragment_maps_are_inverse():
    from tilelang.cuda.intrinsics.layout import mma_layout as L

    for fwd, inv, e in ((L.mma_load_a_32x8_to_shared_16x16_layout, L.shared_16x16_to_mma_a_32x8_layout, 2),
                        (L.mma_load_b_32x8_to_shared_16x16_layout, L.shared_16x16_to_mma_b_32x8_layout, 2),
                        (L.mma_load_a_32x16_to_shared_16x32_layout, L.shared_16x32_to_mma_a_32x16_layout, 4),
                        (L.mma_load_a_32x4_to_shared_16x8_layout, L.shared_16x8_to_mma_a_32x4_layout, 1)):
        seen = set()
        for lane in range(32):
            for v in range(4 * e):
                i, j = fwd(lane, v)
                assert inv(i, j) == (lane, v), (fwd.__name__, lane, v)
                seen.add((i, j))
        assert len(seen) == 32 * 4 * e


def test_accumulator_map_is_the_ptx_c_fragment():
    from tilelang.cuda.intrinsics import mma_store_index_map

    # c0 c1 at row groupID, columns 2 * threadID_in_group (+1); c2 c3 eight rows below; c4.. the second n8 atom
    assert [mma_store_index_map(5, v) for v in range(8)] == [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11),
                                                             (9, 10), (9, 11)]


# ------------------------------------------------------------------------------------------------ tcgen05 / wgmma
def test_tmem_fragment_of_a_one_cta_m64_accumulator_interleaves_half_datapaths():
    from tilelang.cuda.intrinsics.layout.mma_sm100_layout import TCGEN05Meta, make_tmem_frg_c

    buf = tvm.tirx.decl_buffer((128, 32), "float32", scope="shared.tmem")
    layout = make_tmem_frg_c(buf, TCGEN05Meta(64, 32, 16, False, False), is_ts=False).to_tilelang()
    assert [int(x) for x in layout.map_forward_index([16, 0])] == [32, 0]
    assert [int(x) for x in layout.map_forward_index([64, 0])] == [16, 0]


@pytest.mark.parametrize("meta,message", [((128, 24, 16, 0, 0), "1CTA.*multiple of 16"),
                                          ((256, 48, 16, 0, 1), "2CTA.*multiple of 32"),
                                          ((96, 64, 16, 0, 0), "M 64 or 128")])
def test_tcgen05_ts_shapes_are_checked(meta, message):
    from tilelang.cuda.intrinsics.layout.mma_sm100_layout import TCGEN05Meta, validate_tcgen05_ts_instruction

    with pytest.raises(ValueError, match=message):
        validate_tcgen05_ts_instruction(TCGEN05Meta.from_ffi(meta), "bfloat16", False)


@pytest.mark.parametrize("maker,mode,sbo", [(make_full_bank_swizzled_layout, SwizzleMode.SWIZZLE_128B, 64),
                                            (make_half_bank_swizzled_layout, SwizzleMode.SWIZZLE_64B, 32),
                                            (make_quarter_bank_swizzled_layout, SwizzleMode.SWIZZLE_32B, 16)])
def test_gmma_descriptor_of_k_major_bank_swizzles(maker, mode, sbo):
    from tilelang.cuda.intrinsics.macro.wgmma_macro_generator import compute_gmma_descriptor

    buf = tvm.tirx.decl_buffer((128, 64), "float16", scope="shared")
    p = compute_gmma_descriptor(maker(buf), buf, transposed=False)
    assert (p.swizzle_mode, p.leading_byte_offset, p.stride_byte_offset, p.is_k_major) == (mode, 1, sbo, True)


def test_descriptor_of_a_pipeline_stage_is_the_stage_offset():
    from tilelang.cuda.intrinsics.macro.tcgen05_macro_generator import compute_umma_descriptor

    buf = tvm.tirx.decl_buffer((3, 128, 64), "bfloat16", scope="shared")
    ranges = [tvm.ir.Range.from_min_extent(2, 1), tvm.ir.Range.from_min_extent(0, 128),
              tvm.ir.Range.from_min_extent(0, 64)]
    p = compute_umma_descriptor(make_full_bank_swizzled_layout(buf), buf, False, region=ranges)
    assert p.slice_byte_offset == 2 * 128 * 64 * 2 and p.stride_byte_offset == 64


def test_non_canonical_operand_layouts_are_refused():
    from tilelang.cuda.intrinsics.macro.wgmma_macro_generator import compute_gmma_descriptor

    buf = tvm.tirx.decl_buffer((64, 64), "float16", scope="shared")
    column_major = T.Layout((64, 64), lambda i, j: [j, i])
    with pytest.raises(AssertionError, match="only row-major operand layouts"):
        compute_gmma_descriptor(column_major, buf, transposed=False)


@pytest.mark.parametrize("cols,n", [(96, 96), (160, 160), (384, 192), (40, 8)])
def test_wgmma_instruction_width(cols, n):
    from tilelang.cuda.intrinsics.macro.wgmma_macro_generator import select_wgmma_inst_n

    assert select_wgmma_inst_n(cols) == n


def test_tcgen05_meta_and_instruction_descriptor():
    from tilelang.cuda.intrinsics.macro.tcgen05_macro_generator import TensorCoreIntrinEmitter

    e = TensorCoreIntrinEmitter(a_dtype="bfloat16", b_dtype="bfloat16", accum_dtype="float32",
                                warp_row_tiles=128, warp_col_tiles=256, chunk=64)
    assert e.get_tcgen5_mma_meta(128, 256, 64) == (128, 256, 16, 0, 0)
    desc = e.get_tcgen5_instr_desc(128, 256, True, True)
    assert (desc >> 4) & 3 == 1 and (desc >> 7) & 7 == 1 and (desc >> 17) & 63 == 32 and (desc >> 24) & 31 == 8


# ------------------------------------------------------------------------------------------------ dialect reach
def test_cuda_names_resolve_on_tilelang_language():
    import tilelang_cuda.language as cuda

    for name in ("alloc_barrier", "mbarrier_wait_parity", "tma_copy", "ClusterKernel", "set_max_nreg", "ws",
                 "pdl_trigger", "rng_init", "block_rank_in_cluster", "ptx_cp_async", "wgmma_gemm", "tcgen05_gemm",
                 "alloc_tmem", "ldg128", "shuffle_elect"):
        assert getattr(T, name) is getattr(cuda, name), name
    assert T.pdl_trigger.__module__ == "tilelang.cuda.language.pdl"
    assert T.ws.__module__ == "tilelang.cuda.language.warpgroup"
    assert cuda.__tilelang_dialect__ == "cuda" and {"copy", "gemm", "tma_copy"} <= set(cuda.__all__)
    assert cuda.copy is T.copy and cuda.tcgen05_mma is cuda.tcgen05_gemm and cuda.wgmma_mma is cuda.wgmma_gemm


def test_importing_the_language_does_not_import_the_cuda_backend():
    code = "import sys, tilelang.language as T; print('tilelang_cuda' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_name_no_dialect_has_says_so():
    with pytest.raises(AttributeError, match="no attribute 'definitely_not_a_cuda_name'"):
        T.definitely_not_a_cuda_name  # noqa: B018
