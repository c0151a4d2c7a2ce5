"""The ROCm dialect: the reference's ``tilelang.rocm.*`` modules and names, the MFMA / WMMA intrinsic emitters
(their lane maps checked against the instructions' lane layouts in a numpy model, their kernels built into code
objects whose assembly holds the intended instruction per GPU), gfx950's LDS transpose reads, and the refusals
on GPUs and targets without the constructs."""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest
from rocm_dialect_kernels import ds_read, tl_matmul, wmma_matmul

import tilelang
from tilelang.errors import LoweringError
from tilelang_rocm.compiler import finalize
from tilelang_rocm.intrinsics import MatrixCoreIntrinEmitter, WMMAIntrinEmitter


# ------------------------------------------------------------------------------------------------ modules
@pytest.mark.parametrize("module,names", [
    ("tilelang.rocm.intrinsics", ["MatrixCoreIntrinEmitter", "MatrixCorePreshuffleIntrinEmitter", "WMMAIntrinEmitter",
                                  "make_mfma_swizzle_layout", "mfma_store_index_map", "mfma_store_index_map_32x32",
                                  "get_mma_micro_size"]),
    ("tilelang.rocm.intrinsics.mfma_layout", ["make_mfma_swizzle_layout", "shared_16x16_to_local_64x4_layout_A",
                                              "thread_id_shared_access_64x4_to_16x16_layout_C_n_m",
                                              "shared_32x32_to_local_64x16_layout_C"]),
    ("tilelang.rocm.intrinsics.mfma_macro_generator", ["MatrixCoreIntrinEmitter",
                                                       "MatrixCorePreshuffleIntrinEmitter"]),
    ("tilelang.rocm.intrinsics.utils", ["mfma_store_index_map", "get_mma_micro_size"]),
    ("tilelang.rocm.intrinsics.wmma_layout", ["get_wmma_a_layout_funcs", "wmma_store_index_map_gfx11",
                                              "wmma_store_index_map_gfx12", "get_wmma_fragment_replicate_count"]),
    ("tilelang.rocm.intrinsics.wmma_macro_generator", ["WMMAIntrinEmitter"]),
    ("tilelang.rocm.language", ["tvm_mfma", "mfma", "tvm_rdna_wmma", "ds_read_tr16_b64", "ds_read_tr8_b64",
                                "MatrixCoreIntrinEmitter", "sync_threads", "Kernel", "float32x2"]),
    ("tilelang.rocm.language.intrinsics", ["mfma", "mfma_store", "rdna_wmma", "rdna_wmma_store", "tvm_mfma_store"]),
    ("tilelang.rocm.language.tir", ["tvm_mfma", "tvm_mfma_store", "tvm_rdna_wmma", "tvm_rdna_wmma_store"]),
    ("tilelang.rocm.op.gemm", ["GemmMFMA", "GemmWMMA"]),
    ("tilelang.rocm.op.gemm.gemm_mfma", ["GemmMFMA"]),
    ("tilelang.rocm.op.gemm.gemm_wmma", ["GemmWMMA"]),
    ("tilelang.rocm.pipeline", ["PASSES"]),
])
def test_reference_module_paths_import_with_their_names(module, names):
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} lacks {missing}"


def test_dialect_names_are_reachable_from_tilelang_language():
    import tilelang.language as T
    import tilelang.rocm.language as R

    assert T.tvm_mfma is R.tvm_mfma and T.mfma is R.tvm_mfma and T.ds_read_tr16_b64 is R.ds_read_tr16_b64
    assert R.__tilelang_dialect__ == "rocm"


def test_mfma_and_wmma_emitters_subclass_cores_warp_matrix_emitter():
    """Both give lane maps and instructions only: the load / store loops and layouts are core's, and the WMMA
    emitter borrows nothing from the MFMA module."""
    import ast
    import inspect

    from tilelang.backend.sdk import WarpMatrixEmitter
    from tilelang_rocm.intrinsics import wmma_macro_generator

    for cls in (MatrixCoreIntrinEmitter, WMMAIntrinEmitter):
        assert issubclass(cls, WarpMatrixEmitter)
        assert not {"stmatrix", "ldmatrix_a", "ldmatrix_b", "get_thread_binding", "extract_thread_binding",
                    "get_store_index_map", "_load"} & set(vars(cls)), cls
    imports = [n.module for n in ast.walk(ast.parse(inspect.getsource(wmma_macro_generator)))
               if isinstance(n, ast.ImportFrom)]
    assert "tilelang_rocm.intrinsics.mfma_macro_generator" not in imports


# ------------------------------------------------------------------------------------------------ lane-map model
def _mfma_hw(shape: tuple[int, int, int]):
    """The MFMA's own lane layout (src0 M x K, src1 K x N, dst M x N) of ``v_mfma_*_{m}x{n}x{k}``."""
    m, _, k = shape
    groups = 64 // m  # lane groups along K
    per = k // groups

    def src0(lane, v):
        return lane % m, (lane // m) * per + v

    def src1(lane, v):
        return (lane // m) * per + v, lane % m

    def dst(lane, v):
        if m == 16:
            return (lane // 16) * 4 + v, lane % 16
        return (v // 4) * 8 + (lane // 32) * 4 + v % 4, lane % 32

    return src0, src1, dst, per


@pytest.mark.parametrize("dtype,a_t,b_t,k_pack,shape", [
    ("float16", False, True, 1, None), ("float16", True, False, 1, None), ("float16", False, False, 2, None),
    ("float32", False, True, 1, None), ("int8", False, True, 1, None), ("int8", True, True, 1, (32, 32, 32)),
])
def test_mfma_emitter_lane_maps_compute_the_product(dtype, a_t, b_t, k_pack, shape):
    """Operand registers gathered with the emitter's maps, multiplied as the MFMA does (B as src0, A as src1) and
    stored with its store map give A @ B for one wavefront tile."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        em = MatrixCoreIntrinEmitter(dtype, dtype, "int32" if dtype == "int8" else "float32", a_t, b_t, 1, 1,
                                     shape[0] if shape else 16, shape[1] if shape else 16, 64, k_pack=k_pack,
                                     target={"kind": "rocm", "mcpu": "gfx942"}, mfma_shape=shape)
    mdim, kstep = em.M_DIM, em.micro_size_k
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (mdim, kstep * k_pack)).astype(np.int64)
    B = rng.integers(-3, 4, (kstep * k_pack, mdim)).astype(np.int64)
    A_st, B_st = (A.T if a_t else A), (B if not b_t else B.T)
    _, rev_a = em.get_ldmatrix_index_map(is_b=False)
    _, rev_b = em.get_ldmatrix_index_map(is_b=True)
    per_a, per_b = em.local_size_a * k_pack, em.local_size_b * k_pack
    a_regs = np.array([[A_st[rev_a(lane, v)] for v in range(per_a)] for lane in range(64)])
    b_regs = np.array([[B_st[rev_b(lane, v)] for v in range(per_b)] for lane in range(64)])
    src0, src1, dst, per = _mfma_hw((em.M_DIM, em.N_DIM, em.k_dim))
    D = np.zeros((mdim, mdim), np.int64)
    for kp in range(k_pack):
        s0, s1 = np.zeros((mdim, em.k_dim), np.int64), np.zeros((em.k_dim, mdim), np.int64)
        for lane in range(64):
            for v in range(per):
                s0[src0(lane, v)] = b_regs[lane][kp * per + v]
                s1[src1(lane, v)] = a_regs[lane][kp * per + v]
        D += s0 @ s1
    C = np.zeros((mdim, mdim), np.int64)
    for lane in range(64):
        for v in range(em.local_size_out):
            C[tuple(int(x) for x in em._store_map()(lane, v))] = D[dst(lane, v)]
    np.testing.assert_array_equal(C, A @ B)


@pytest.mark.parametrize("mcpu,b_t", [("gfx1100", True), ("gfx1100", False), ("gfx1200", True), ("gfx1200", False)])
def test_wmma_emitter_lane_maps_compute_the_product(mcpu, b_t):
    em = WMMAIntrinEmitter("float16", "float16", "float32", False, b_t, 1, 1, 16, 16, 16,
                           target={"kind": "rocm", "mcpu": mcpu})
    rng = np.random.default_rng(1)
    A, B = rng.integers(-3, 4, (16, 16)), rng.integers(-3, 4, (16, 16))
    B_st = B.T if b_t else B
    gfx11 = em.rdna_gen == 11
    # the instruction's lane layouts (gfx11: whole K rows, both half-waves; gfx12: 8 K values a lane)
    if gfx11:
        hw_a, hw_b = (lambda t, v: (t % 16, v)), (lambda t, v: (v, t % 16))
        hw_d = lambda t, v: (v * 2 + t // 16, t % 16)
    else:
        hw_a, hw_b = (lambda t, v: (t % 16, (t // 16) * 8 + v)), (lambda t, v: ((t // 16) * 8 + v, t % 16))
        hw_d = lambda t, v: ((t // 16) * 8 + v, t % 16)
    src0, src1 = np.zeros((16, 16), np.int64), np.zeros((16, 16), np.int64)
    for t in range(32):
        for v in range(em.local_size_a):
            a_el = A[tuple(int(x) for x in em.a_reverse_layout_fn(t, v))]
            b_el = B_st[tuple(int(x) for x in em.b_reverse_layout_fn(t, v))]
            src0[hw_a(t, v)], src1[hw_b(t, v)] = a_el, b_el
    D = src0 @ src1
    C = np.zeros((16, 16), np.int64)
    for t in range(32):
        for v in range(em.local_size_out):
            C[tuple(int(x) for x in em.c_reverse_layout_fn(t, v))] = D[hw_d(t, v)]
    np.testing.assert_array_equal(C, A @ B)


# ------------------------------------------------------------------------------------------------ code objects
def _asm(func, mcpu: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return finalize(tilelang.lower(func, target={"kind": "rocm", "mcpu": mcpu})).kernel_source


def _matrix_ops(asm: str) -> set[str]:
    return set(re.findall(r"\bv_(?:mfma|wmma)_\w+", asm))


@pytest.mark.parametrize("mcpu,dtype,accum,k_pack,instruction", [
    ("gfx942", "float16", "float32", 1, "v_mfma_f32_16x16x16_f16"),
    ("gfx90a", "float16", "float32", 1, "v_mfma_f32_16x16x16f16"),
    ("gfx950", "float16", "float32", 2, "v_mfma_f32_16x16x32_f16"),
    ("gfx942", "int8", "int32", 1, "v_mfma_i32_16x16x32_i8"),
    ("gfx942", "float32", "float32", 1, "v_mfma_f32_16x16x4_f32"),
    ("gfx90a", "bfloat16", "float32", 1, "v_mfma_f32_16x16x16bf16_1k"),
    ("gfx942", "bfloat16", "float32", 1, "v_mfma_f32_16x16x16_bf16"),
    ("gfx950", "bfloat16", "float32", 2, "v_mfma_f32_16x16x16_bf16"),  # two halves of the x32 step
])
def test_mfma_emitter_kernel_builds_to_its_instruction(mcpu, dtype, accum, k_pack, instruction, lld22):
    target = {"kind": "rocm", "mcpu": mcpu}
    asm = _asm(tl_matmul(128, 128, 128, dtype, accum, accum, k_pack=k_pack, target=target), mcpu)
    assert _matrix_ops(asm) == {instruction}
    assert "scratch" not in asm or re.search(r"\.private_segment_fixed_size:\s+0\b", asm)


@pytest.mark.parametrize("mcpu,dtype,instruction", [("gfx1100", "float16", "v_wmma_f32_16x16x16_f16"),
                                                    ("gfx1100", "bfloat16", "v_wmma_f32_16x16x16_bf16"),
                                                    ("gfx1200", "float16", "v_wmma_f32_16x16x16_f16")])
def test_wmma_emitter_kernel_builds_to_its_instruction(mcpu, dtype, instruction, lld22):
    asm = _asm(wmma_matmul(128, 128, 128, dtype, target={"kind": "rocm", "mcpu": mcpu}), mcpu)
    assert _matrix_ops(asm) == {instruction}


@pytest.mark.parametrize("bits", [16, 8])
def test_lds_transpose_reads_build_on_gfx950(bits, lld22):
    assert f"ds_read_b64_tr_b{bits}" in _asm(ds_read(bits), "gfx950")


# ------------------------------------------------------------------------------------------------ refusals
def _refusal(func, target) -> str:
    with pytest.raises(LoweringError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tilelang.lower(func, target=target)
    return str(info.value)


@pytest.mark.parametrize("make,target,expect", [
    (lambda: tl_matmul(64, 64, 64, "float16", "float32", "float32", target={"kind": "rocm", "mcpu": "gfx942"}),
     {"kind": "rocm", "mcpu": "gfx1100"}, ["T.tvm_mfma on target 'rocm'", "gfx90a", "target mcpu gfx1100"]),
    (lambda: tl_matmul(64, 64, 64, "int8", "int32", "int32", target={"kind": "rocm", "mcpu": "gfx942"}),
     {"kind": "rocm", "mcpu": "gfx90a"}, ["v_mfma_i32_16x16x32_i8", "gfx942, gfx950 have", "gfx90a does not"]),
    (lambda: tl_matmul(64, 64, 64, "float16", "float32", "float32", target={"kind": "rocm", "mcpu": "gfx942"}),
     {"kind": "cuda", "arch": "sm_90a"}, ["T.tvm_mfma on target 'cuda'", "AMD construct"]),
    (lambda: wmma_matmul(64, 64, 64, target={"kind": "rocm", "mcpu": "gfx1100"}),
     {"kind": "rocm", "mcpu": "gfx942"}, ["T.tvm_rdna_wmma on target 'rocm'", "gfx1100", "gfx942 does not"]),
    (lambda: ds_read(16), {"kind": "rocm", "mcpu": "gfx942"},
     ["T.ds_read_tr16_b64 on target 'rocm'", "gfx950 has", "gfx942 does not"]),
    (lambda: ds_read(8), "cpu", ["T.ds_read_tr8_b64 on target 'llvm'", "AMD construct"]),
])
def test_constructs_are_refused_where_the_hardware_lacks_them(make, target, expect):
    from tilelang.backend import plugins

    kind = target["kind"] if isinstance(target, dict) else target
    if kind not in plugins.installed_kinds():  # the slim ROCm-only venv: the other backend is not there
        pytest.skip(f"needs the backend of target kind {kind!r}")
    text = _refusal(make(), target)
    missing = [e for e in expect if e not in text]
    assert not missing, text
