"""tilelang_cuda.contrib.cutedsl on NVIDIA's CuTe DSL: each helper, called from a small kernel (cutedsl_kernels.py),
compiles (no GPU needed) to the PTX instruction it stands for; without the DSL the names stay stand-ins that say
what to install."""

from __future__ import annotations

import importlib
import inspect

import pytest

pytest.importorskip("cutlass.cute", reason="needs NVIDIA's CuTe DSL: pip install 'tilelang-cuda[cutedsl]'")

import cutedsl_kernels

from tilelang_cuda.adapters.cutedsl import checks
from tilelang_cuda.contrib.cutedsl import CuTeDSLHelperUnavailable

CASES = {  # kernel -> (arch, PTX the helpers must produce)
    "k_bar_sync": ("sm_80", ["bar.sync 1, 64;", "bar.sync 2, 128;"]),
    "k_named_barrier": ("sm_90a", ["bar.sync 1, 64;", "bar.arrive 3, 96;"]),
    "k_allreduce_warp": ("sm_80", ["shfl.sync.bfly.b32", "max.f32"]),
    "k_allreduce_block": ("sm_90a", ["bar.sync 1, 128;", "bar.sync 2, 128;", "st.shared.b32", "ld.shared.b32",
                                     "shfl.sync.bfly.b32"]),
    "k_minmax": ("sm_80", ["min.", "max.", "max.f32"]),
    "k_cumsum": ("sm_80", ["shfl.sync.up.b32", "shfl.sync.down.b32", "max.f32"]),
    "k_warp": ("sm_80", ["activemask.b32", "match.any.sync.b32", "popc.b32", "shfl.sync.bfly.b32",
                         "shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32", "min.f32", "max.f32",
                         "and.b32", "or.b32"]),
    "k_math_fast": ("sm_80", ["ex2.approx", "rsqrt.approx", "lg2.approx", "tanh.approx.f32", "sin.approx"]),
    "k_math_exact": ("sm_80", ["sqrt.rn.f32", "div.rn.f32", "abs.f32", "cvt.rz.f16.f32", "copysign.f32"]),
    "k_atomic": ("sm_90a", ["atom.global.add.f32", "atom.global.add.u32", "atom.add.noftz.f16",
                            "atom.global.add.v2.f32", "atom.global.add.v4.f32", "atom.global.max.s32",
                            "atom.global.min.s32", "atom.relaxed.gpu.cas.b32", "ld.acquire.gpu.s32",
                            "st.release.gpu.s32", "fence.sc.gpu; ld.relaxed.gpu.f32",
                            "fence.sc.gpu; st.relaxed.gpu.f32"]),
    "k_cp_async_80": ("sm_80", ["cp.async.cg.shared.global [%r1], [%rd1], 16;", "cp.async.ca.shared.global",
                                "@p cp.async.ca.shared.global", "cp.async.commit_group;", "cp.async.wait_group"]),
    "k_mbarrier": ("sm_90a", ["mbarrier.init.shared.b64", "fence.mbarrier_init.release.cluster",
                              "fence.proxy.async.shared::cta", "mbarrier.expect_tx", "mbarrier.arrive.expect_tx",
                              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                              "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                              "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group",
                              "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group",
                              "cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.commit_group",
                              "cp.async.bulk.wait_group.read", "prefetch.tensormap",
                              "cp.async.mbarrier.arrive.shared::cta.b64", "cp.async.mbarrier.arrive.noinc",
                              "mbarrier.arrive.shared.b64", "mbarrier.try_wait.parity"]),
    "k_ldmatrix_80": ("sm_80", ["ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
                                "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"]),
    "k_stmatrix": ("sm_90a", ["stmatrix.sync.aligned.m8n8.x1.shared.b16",
                              "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"]),
    "k_swizzle": ("sm_80", ["%ctaid.x", "%nctaid.y", "div.s32", "selp.b32"]),
    "k_grid_sync": ("sm_80", ["atom.add.acq_rel.gpu.global.u32", "ld.acquire.gpu.global.u32",
                              "st.release.gpu.global.u32", "__tl_grid_sync_count", "bar.sync"]),
    "k_cluster": ("sm_90a", ["barrier.cluster.arrive.relaxed.aligned", "barrier.cluster.arrive.aligned",
                             "barrier.cluster.wait", "%cluster_ctarank"]),
    "k_clc_100": ("sm_100a", ["clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128",
                              "multicast::cluster::all", "query_cancel.is_canceled.pred.b128",
                              "query_cancel.get_first_ctaid::x.b32.b128", "get_first_ctaid::z"]),
    "k_ieee": ("sm_80", ["add.rz.f32", "sub.rm.f32", "mul.rp.f32", "fma.rn.f32", "rcp.rn.f32", "sqrt.rz.f32",
                         "div.rn.f32", "add.rn.f64"]),
    "k_utils": ("sm_80", ["mov.b32 %r", "bar.sync 3, 128;"]),
    "k_mma_80": ("sm_80", [f"mma.sync.aligned.{shape}.row.col.{types}" for shape, types in [
        ("m16n8k16", "f32.f16.f16.f32"), ("m16n8k16", "f16.f16.f16.f16"), ("m16n8k16", "f32.bf16.bf16.f32"),
        ("m16n8k32", "s32.s8.s8.s32"), ("m16n8k32", "s32.u8.u8.s32"), ("m16n8k64", "s32.s4.s4.s32"),
        ("m16n8k64", "s32.u4.u4.s32"), ("m16n8k4", "f32.tf32.tf32.f32"), ("m16n8k8", "f32.tf32.tf32.f32"),
        ("m8n8k4", "f64.f64.f64.f64")]]),
    "k_mma_fp8": ("sm_90a", ["mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
                             "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16",
                             "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"]),
    "k_mma_sp_80": ("sm_80", [f"mma.sp.sync.aligned.{shape}.row.col.{types}" for shape, types in [
        ("m16n8k32", "f32.f16.f16.f32"), ("m16n8k32", "f16.f16.f16.f16"), ("m16n8k16", "f32.f16.f16.f32"),
        ("m16n8k16", "f16.f16.f16.f16"), ("m16n8k32", "f32.bf16.bf16.f32"), ("m16n8k16", "f32.bf16.bf16.f32"),
        ("m16n8k64", "s32.s8.s8.s32"), ("m16n8k32", "s32.s8.s8.s32"), ("m16n8k16", "f32.tf32.tf32.f32"),
        ("m16n8k8", "f32.tf32.tf32.f32")]]),
    "k_quantize_80": ("sm_80", ["lop3.b32 h, %r", "0x000f000f, 0x64006400, 0xea;", "sub.f16x2", "prmt.b32",
                                "fma.rn.bf16x2"]),
    "k_wgmma": ("sm_90a", ["wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned",
                           "wgmma.wait_group.sync.aligned", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
                           "p, 1, 1, 0, 1;", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "p, 1, -1, 0;",
                           "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2",
                           "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8", "p;",
                           "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"]),
    "k_tcgen05_100": ("sm_100a", ["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
                                  "tcgen05.dealloc.cta_group::1.sync.aligned.b32", "tcgen05.fence::before_thread_sync",
                                  "tcgen05.fence::after_thread_sync", "elect.sync _|q",
                                  "@q tcgen05.mma.cta_group::1.kind::f16",
                                  "@q tcgen05.mma.ws.cta_group::1.kind::f8f6f4",
                                  "@q tcgen05.mma.cta_group::1.kind::i8 [%r",
                                  "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
                                  "tcgen05.ld.sync.aligned.32x32b.x32.b32", "tcgen05.ld.sync.aligned.16x64b.x4.b32",
                                  "tcgen05.ld.sync.aligned.16x128b.x2.b32", "tcgen05.ld.sync.aligned.16x256b.x1.b32",
                                  "tcgen05.wait::ld.sync.aligned", "tcgen05.st.sync.aligned.32x32b.x8.b32",
                                  "tcgen05.st.sync.aligned.16x256b.x1.b32", "tcgen05.wait::st.sync.aligned",
                                  "tcgen05.cp.cta_group::1.32x128b.warpx4",
                                  "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"]),
    "k_gemm_v1_80": ("sm_80", ["ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans",
                               "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"]),
    "k_gemm_v1_sm90": ("sm_90a", ["wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
                                  "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0;"]),
    "k_reexports": ("sm_80", ["bar.sync 0;", "@p trap;", "%tid.x"]),
    "k_setmaxnreg": ("sm_90a", ["setmaxnreg.inc.sync.aligned.u32 232", "setmaxnreg.dec.sync.aligned.u32 40"]),
}


def test_every_kernel_has_a_case():
    assert set(CASES) == set(cutedsl_kernels.KERNELS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_helper_compiles_to_its_instruction(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the DSL writes the kept .ptx into the working directory
    arch, expected = CASES[name]
    ptx = cutedsl_kernels.ptx(name, arch)
    assert f".target {arch}" in ptx
    flat = " ".join(ptx.split())
    missing = [text for text in expected if " ".join(text.split()) not in flat]
    assert not missing, f"{name} for {arch}: {missing} not in the PTX:\n{ptx}"


MODULES = [  # every helper module of tilelang.contrib.cutedsl
    "atomic", "cluster", "cpasync", "gemm_tcgen05", "gemm_v1", "gemm_v2", "grid_sync", "ieee_math", "ldsm", "math",
    "ptx_mma", "quantize", "reduce", "threadblock_swizzle", "utils", "warp"]


@pytest.mark.parametrize("module", MODULES)
def test_helpers_are_real_where_the_dsl_is_installed(module):
    mod = importlib.import_module(f"tilelang_cuda.contrib.cutedsl.{module}")
    names = [*mod._FUNCTIONS, *getattr(mod, "_CLASSES", [])]
    standins = [n for n in names if "Stand-in" in (inspect.getdoc(getattr(mod, n)) or "")]
    assert not standins, f"{module}: {standins} are still stand-ins"


def test_package_reexports_are_real():
    import tilelang_cuda.contrib.cutedsl as lib

    standins = [n for n in lib._REEXPORTED if "Stand-in" in (inspect.getdoc(getattr(lib, n)) or "")]
    assert not standins


def test_mma_dispatch_rejects_what_it_cannot_issue():
    mma = importlib.import_module("tilelang_cuda.contrib.cutedsl.ptx_mma")

    with pytest.raises(ValueError, match="unsupported configuration"):
        mma.ptx_mma("m16n8k16", "row", "col", "float16", "bfloat16", "float32", None, 0, None, 0, None, 0)
    with pytest.raises(ValueError, match="row-major"):
        mma.ptx_mma_m16n8k16_f16_f16_f32(None, 0, None, 0, None, 0, "col", "col")


def test_wgmma_rejects_shapes_and_options_it_cannot_issue():
    from tilelang_cuda.contrib.cutedsl import gemm_v2

    with pytest.raises(ValueError, match="m64nNk16"):
        gemm_v2.wgmma_ss("float16", "float16", "float32", 64, 64, 32, False, False, 1, 1, None, None, None, 1)
    with pytest.raises(ValueError, match="K-major"):
        gemm_v2.wgmma_ss("float8_e4m3", "float8_e4m3", "float32", 64, 64, 32, True, False, 1, 1, None, None, None, 1)
    with pytest.raises(ValueError, match="unsupported dtype"):
        gemm_v2.wgmma_rs("float64", "float64", "float32", 64, 64, 16, False, 1, 1, None, None, None, 1)


def test_tmem_accesses_step_by_the_columns_each_shape_spans():
    tc = importlib.import_module("tilelang_cuda.contrib.cutedsl._dsl.gemm_tcgen05")

    assert [tc._columns(s) for s in ("32x32b", "16x64b", "16x128b", "16x256b")] == [1, 2, 4, 8]
    assert list(tc._segments(64, 1)) == [(0, 32), (32, 32)]  # at most 32 registers a statement
    assert list(tc._segments(7, 4)) == [(0, 4), (4, 2), (6, 1)]


def test_unpacked_fp4_is_a_dsl_float_of_one_byte():
    from cutlass.base_dsl.typing import Float

    from tilelang_cuda.contrib.cutedsl import utils

    assert issubclass(utils.Float4E2M1FN_unpack, Float) and utils.Float4E2M1FN_unpack.width == 8


def test_twiddled_fp4_layout_decodes_every_nibble():
    """The bit tables of decode_fp4_to_bf16_twiddling, applied to plain ints as the kernel applies them to
    registers: every nibble position and value decodes to its e2m1 value after the 2**126 rescale."""
    import struct

    q = importlib.import_module("tilelang_cuda.contrib.cutedsl._dsl.quantize")
    e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]

    def moved(word, nibble):
        out = 0
        for source, target in zip((nibble[0], *nibble[1], nibble[2]), (15, 8, 7, 6)):
            bit = word >> (source - target) if source > target else word << (target - source)
            out |= bit & ((1 << target) | (1 << (target + 16)))
        return out & 0xFFFFFFFF

    def bf16(bits):
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]

    for k, (sign, (e1, e0), m) in enumerate(q._TWIDDLED):
        for value in range(16):
            word = sum(((value >> b) & 1) << pos for b, pos in ((3, sign), (2, e1), (1, e0), (0, m)))
            half = moved(word, q._TWIDDLED[k]) & 0xFFFF
            expected = (-1.0 if value & 8 else 1.0) * e2m1[value & 7]
            assert bf16(half) * 2.0 ** 126 == expected, (k, value)
    assert q._TWO_POW_126 == 0x7E807E80 and bf16(0x7E80) == 2.0 ** 126


def test_named_barrier_and_allreduce_check_their_arguments():
    from tilelang_cuda.contrib.cutedsl import reduce

    with pytest.raises(ValueError, match="barrier_id"):
        reduce.NamedBarrier(64, barrier_id=16)
    with pytest.raises(ValueError, match="multiple of 32"):
        reduce.NamedBarrier(48)
    with pytest.raises(ValueError, match="power of two"):
        reduce.AllReduce(reduce.SumOp, 48, 1)


def test_without_the_dsl_the_names_stay_stand_ins(monkeypatch):
    from tilelang_cuda.contrib.cutedsl import reduce, warp

    monkeypatch.setattr(checks, "_installed_version", lambda: None)
    monkeypatch.setattr(checks, "_has_cute_package", lambda: False)
    try:
        importlib.reload(reduce)
        importlib.reload(warp)
        with pytest.raises(CuTeDSLHelperUnavailable, match=r"pip install 'nvidia-cutlass-dsl>=4\.7\.0"):
            reduce.NamedBarrier(64)
        with pytest.raises(CuTeDSLHelperUnavailable, match="warp.warp_reduce_sum is a CuTe DSL device helper"):
            warp.warp_reduce_sum(1)
    finally:
        monkeypatch.undo()
        importlib.reload(reduce)
        importlib.reload(warp)
    assert "Stand-in" not in (inspect.getdoc(reduce.NamedBarrier) or "")
