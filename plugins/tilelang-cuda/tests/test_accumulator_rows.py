"""Row vectors of tensor-core accumulators (`tilelang_cuda.passes.accumulator_rows`).

The layout model is checked against `AccumulatorLayout.position` (which the MMA lowering uses), the reduction
algorithm is replayed on that model with numpy, and real kernels are lowered (and built with nvcc) to check that
row vectors become per-thread registers only when every use is understood.
"""

from __future__ import annotations

import itertools
import re
import warnings

import numpy as np
import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.testing import corpus
from tilelang_cuda.mma_layout import MMA, WGMMA, AccumulatorLayout
from tilelang_cuda.passes.accumulator_rows import RowLayout, register_of, slot_of

LAYOUTS = [AccumulatorLayout(64, 64, 4, 1, MMA), AccumulatorLayout(128, 64, 4, 1, MMA),
           AccumulatorLayout(64, 128, 2, 1, MMA), AccumulatorLayout(64, 64, 4, 1, WGMMA),
           AccumulatorLayout(128, 256, 8, 1, WGMMA)]


def _threads(lay: AccumulatorLayout) -> int:
    return lay.wm * lay.wn * 32


@pytest.mark.parametrize("lay", LAYOUTS, ids=str)
def test_slots_hold_the_rows_of_the_registers(lay):
    rows = RowLayout.of(lay)
    for tid, r in itertools.product(range(_threads(lay)), range(lay.regs)):
        row, _ = lay.position(tid, r)
        assert rows.row(tid, slot_of(lay, r)) == row
    for s in range(rows.slots):
        regs = [register_of(lay, s, c) for c in range(2 * lay.ni)]
        assert sorted(regs) == sorted(r for r in range(lay.regs) if slot_of(lay, r) == s)


@pytest.mark.parametrize("lay", LAYOUTS, ids=str)
def test_each_row_is_spread_over_one_quad_of_lanes(lay):
    owners: dict[int, dict[int, set[int]]] = {}
    for tid, r in itertools.product(range(_threads(lay)), range(lay.regs)):
        row, col = lay.position(tid, r)
        owners.setdefault(row, {}).setdefault(tid, set()).add(col)
    assert sorted(owners) == list(range(lay.m))
    for cols_of in owners.values():
        tids = sorted(cols_of)
        assert tids == [tids[0] ^ x for x in range(4)] and tids[0] % 4 == 0  # lanes l, l^1, l^2, l^3
        assert sorted(itertools.chain(*cols_of.values())) == list(range(lay.n))


@pytest.mark.parametrize("lay", LAYOUTS, ids=str)
@pytest.mark.parametrize("kind", ["sum", "max", "absmax"])
def test_register_fold_and_quad_butterfly_give_the_row_reduction(lay, kind):
    rng = np.random.default_rng(0)
    acc = rng.standard_normal((lay.m, lay.n)).astype(np.float32)
    threads, rows = _threads(lay), RowLayout.of(lay)
    regs = np.array([[acc[lay.position(t, r)] for r in range(lay.regs)] for t in range(threads)])
    fold = {"sum": np.add, "max": np.maximum, "absmax": np.maximum}[kind]
    values = np.abs(regs) if kind == "absmax" else regs
    for s in range(rows.slots):
        part = values[:, register_of(lay, s, 0)].copy()
        for c in range(1, 2 * lay.ni):
            part = fold(part, values[:, register_of(lay, s, c)])
        for mask in (1, 2):  # tl_shfl_xor within each warp
            part = fold(part, part[np.arange(threads) ^ mask])
        ref = {"sum": acc.sum(1), "max": acc.max(1), "absmax": np.abs(acc).max(1)}[kind]
        expect = np.array([ref[rows.row(t, s)] for t in range(threads)])
        np.testing.assert_allclose(part, expect, rtol=1e-5, atol=1e-5)


def _row_kernel(policy, plain_read: bool = False, kind: str = "max", clear: bool = True):
    M = N = K = 64

    @T.prim_func
    def rows(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), Out: T.Tensor((M, N), "float32"),
             Red: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            m = T.alloc_fragment((M,), "float32")
            T.copy(A[bx * M:(bx + 1) * M, :], A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.fill(m, 0.5)
            T.gemm(A_s, B_s, acc, policy=policy)
            T.reduce(acc, m, kind, dim=1, clear=clear)
            for i, j in T.Parallel(M, N):
                acc[i, j] = acc[i, j] - m[i]
            if plain_read:
                acc[0, 0] = m[3]
            T.copy(acc, Out)
            T.copy(m, Red)

    return rows


def _source(func, arch: str) -> str:
    """The kernel's body (the source after the intrinsics header)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = tilelang.lower(func, target={"kind": "cuda", "arch": arch}).kernel_source
    return src[src.rindex('extern "C" __global__'):]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("kind,clear", [("max", True), ("sum", False), ("abssum", True)])
def test_row_vectors_of_full_row_gemms_become_registers(arch, kind, clear):
    src = _source(_row_kernel(T.GemmWarpPolicy.FullRow, kind=kind, clear=clear), arch)
    assert re.search(r"float m_rows_ptr\[2\]", src), "m should hold the thread's two rows"
    assert src.count("tl_shfl_xor(") == 2 * 2  # two rows, butterfly over the quad
    assert re.search(r"m_rows_ptr\[1\] = 0x1p-1f", src)  # the fill (0.5) runs per slot
    assert not re.search(r"float m_ptr\[64\]", src)
    assert ("Red_ptr[" in src) and re.search(r"Red_ptr\[.*\] = m_rows_ptr\[[01]\]", src)
    if not clear:
        assert re.search(r"m_rows_ptr\[0\] = \(m_rows_ptr\[0\] \+ row_part", src)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_row_vectors_with_other_uses_stay_with_core(arch):
    src = _source(_row_kernel(T.GemmWarpPolicy.FullRow, plain_read=True), arch)
    assert "m_rows_ptr" not in src and "tl_shfl_xor(" not in src


SPLIT_LAYOUTS = [AccumulatorLayout(64, 64, 2, 2, MMA), AccumulatorLayout(64, 64, 1, 8, MMA),
                 AccumulatorLayout(64, 512, 4, 2, WGMMA)]


@pytest.mark.parametrize("lay", SPLIT_LAYOUTS, ids=str)
def test_slots_of_grids_with_split_rows_hold_the_rows_in_every_warp_column(lay):
    rows = RowLayout.of(lay)
    for tid, r in itertools.product(range(_threads(lay)), range(lay.regs)):
        row, col = lay.position(tid, r)
        assert rows.row(tid, slot_of(lay, r)) == row
        assert col // (lay.n // lay.wn) == rows.warp_column(tid)  # the thread's columns: its warp column's slice


@pytest.mark.parametrize("kind,clear", [("max", True), ("sum", False), ("absmax", False)])
def test_row_vectors_of_grids_with_split_rows_combine_warp_columns_in_the_emulator(kind, clear):
    """2 x 2 warps (Square): a row's columns are in two warps; their partials meet in shared memory."""
    import torch
    from cuda_emulator import emulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_row_kernel(T.GemmWarpPolicy.Square, kind=kind, clear=clear),
                             target={"kind": "cuda", "arch": "sm_80"})
    src = art.kernel_source
    assert "m_rows_ptr" in src and "row_partials" in src and not re.search(r"float m_ptr\[64\]", src)
    torch.manual_seed(1)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    out, red = torch.zeros(64, 64), torch.zeros(64)
    emulate(art, a, b, out, red)
    acc = a.float() @ b.float()
    row = {"max": acc.amax(1), "sum": acc.sum(1), "absmax": acc.abs().amax(1)}[kind]
    if not clear:
        row = row + 0.5 if kind == "sum" else torch.maximum(row, torch.full_like(row, 0.5))
    torch.testing.assert_close(red, row, atol=2e-2, rtol=1e-3)
    torch.testing.assert_close(out, acc - row[:, None], atol=2e-2, rtol=1e-3)


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_keeps_its_row_state_in_registers(arch, causal):
    from tilelang_cuda.compiler import compile_artifact

    k = corpus.flash_attention(batch=1, heads=2, seq_len=256, dim=64, is_causal=causal, block_M=64, block_N=64,
                               num_stages=1, threads=128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(k.prim_func(), target={"kind": "cuda", "arch": arch})
    src = art.kernel_source
    for name in ("scores_max", "scores_max_prev", "scores_scale", "scores_sum", "logsum"):
        assert re.search(rf"float {name}_rows_ptr\[2\]", src), name
    compile_artifact(art)
    ptxas = art.metadata["ptxas"]
    # before: 255 (sm_80) / 247 (sm_90a) registers and an 816-byte stack frame (the replicated row vectors)
    assert ptxas["stack_bytes"] == 0 and ptxas["spill_stores"] == 0
    # a warp-specialised kernel (sm_90a) reports its consumers' setmaxnreg budget
    assert ptxas["registers"] <= (240 if "tl_set_max_nreg_inc(240)" in src else 168)


def _two_accumulators():
    M = N = K = 64

    @T.prim_func
    def two(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), Out: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc1 = T.alloc_fragment((M, N), "float32")
            acc2 = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc1)
            T.clear(acc2)
            T.gemm(A_s, B_s, acc1)
            T.gemm(A_s, B_s, acc2, transpose_B=True)
            for i, j in T.Parallel(M, N):
                acc2[i, j] = acc2[i, j] + acc1[i, j] * 2.0
            T.copy(acc2, Out[bx * M:(bx + 1) * M, :])

    return two


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_nest_over_two_accumulators_of_one_layout_reads_both_registers(arch):
    src = _source(_two_accumulators(), arch)
    assert re.search(r"acc2_acc_ptr\[5\] = \(acc2_acc_ptr\[5\] \+ \(acc1_acc_ptr\[5\] \*", src)
    assert "acc1[" not in src and "acc2[" not in src


# ---------------------------------------------------------------- numerics in the SIMT emulator (sm_80)
@pytest.mark.parametrize("kind,clear", [("max", True), ("sum", False), ("abssum", True), ("min", False)])
def test_row_reductions_match_torch_in_the_emulator(kind, clear):
    import torch
    from cuda_emulator import emulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_row_kernel(T.GemmWarpPolicy.FullRow, kind=kind, clear=clear),
                             target={"kind": "cuda", "arch": "sm_80"})
    assert "m_rows_ptr" in art.kernel_source
    torch.manual_seed(0)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    out, red = torch.zeros(64, 64), torch.zeros(64)
    emulate(art, a, b, out, red)
    acc = a.float() @ b.float()
    row = {"max": acc.amax(1), "sum": acc.sum(1), "abssum": acc.abs().sum(1), "min": acc.amin(1)}[kind]
    if not clear:  # folded into the fill value 0.5
        row = row + 0.5 if kind == "sum" else torch.minimum(row, torch.full_like(row, 0.5))
    torch.testing.assert_close(red, row, atol=2e-2, rtol=1e-3)
    torch.testing.assert_close(out, acc - row[:, None], atol=2e-2, rtol=1e-3)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("kind,clear", [("max", True), ("absmax", False), ("min", False)])
def test_row_max_min_fold_with_the_headers_nan_keeping_max(arch, kind, clear):
    # one `tl_max_nan` / `tl_min_nan` per register, shuffle and old value (FMNMX.NAN on sm_80+), not core's
    # ``(acc < x) || (x != x) ? x : acc`` (two compares, a predicate op and a select per element)
    src = _source(_row_kernel(T.GemmWarpPolicy.FullRow, kind=kind, clear=clear), arch)
    fn = "tl_min_nan(" if kind == "min" else "tl_max_nan("
    folds = src.count(fn)
    assert folds >= 2 * (2 + 2 + (0 if clear else 1)), src  # two rows: >= 2 registers, 2 shuffles, the old value
    assert not any(" != " in line and " ? " in line for line in src.splitlines()), src
    if kind == "absmax":
        assert re.search(r"tl_max_nan\(row_part_ptr\[0\], fabsf\(", src), src


@needs_nvcc
def test_row_max_compiles_to_the_ptx_nan_keeping_max():
    from tilelang_cuda.compiler import compile_artifact

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_row_kernel(T.GemmWarpPolicy.FullRow, kind="max"),
                             target={"kind": "cuda", "arch": "sm_80"})
    ptx = compile_artifact(art).ptx
    assert ptx.count("max.NaN.f32") >= 2 * (2 + 2)
    assert "setp.nan" not in ptx  # no compare-and-select fold left


@pytest.mark.parametrize("kind", ["max", "absmax", "min"])
def test_a_nan_in_one_register_of_a_row_makes_its_max_nan_in_the_emulator(kind):
    # row 5 of A @ B is +inf everywhere but one NaN (inf * 0) in column 37, held by one lane of the quad:
    # the register fold or the butterfly would drop it with fmaxf / fminf; the other rows are finite
    import torch
    from cuda_emulator import emulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(_row_kernel(T.GemmWarpPolicy.FullRow, kind=kind),
                             target={"kind": "cuda", "arch": "sm_80"})
    torch.manual_seed(0)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    a[5, :], a[5, 3] = 0, float("inf")
    b[3, :], b[3, 37] = 1, 0
    out, red = torch.zeros(64, 64), torch.zeros(64)
    emulate(art, a, b, out, red)
    acc = a.float() @ b.float()
    assert acc[5].isnan().sum() == 1 and acc[5, 36] == float("inf")
    row = {"max": acc.amax(1), "absmax": acc.abs().amax(1), "min": acc.amin(1)}[kind]
    assert red[5].isnan() and not red[torch.arange(64) != 5].isnan().any()
    torch.testing.assert_close(red, row, atol=2e-2, rtol=1e-3, equal_nan=True)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_flash_attention_feeds_p_to_the_second_gemm_from_registers(arch):
    k = corpus.flash_attention(batch=1, heads=1, seq_len=128, dim=64, is_causal=False, block_M=64, block_N=64,
                               num_stages=2, threads=128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = tilelang.lower(k.prim_func(), target={"kind": "cuda", "arch": arch}).kernel_source
    body = src[src.rindex('extern "C" __global__'):]
    assert re.search(r"half acc_s_cast_regs_ptr\[32\]", body)
    assert "acc_s_cast_regs_ptr[7] = ((half)acc_s_acc_ptr[7]);" in body
    assert "tl_regs_copy16(" in body
    assert "acc_s_stage" not in body and "acc_s_cast_stage" not in body  # no shared round trip for P


def test_a_half_copy_with_other_uses_stays_a_fragment():
    M = N = K = 64

    @T.prim_func
    def other(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), Out: T.Tensor((M, N), "float32"),
              P: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((K, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            acc2 = T.alloc_fragment((M, N), "float32")
            p = T.alloc_fragment((M, N), "float16")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.clear(acc2)
            T.gemm(A_s, B_s, acc, policy=T.GemmWarpPolicy.FullRow)
            T.copy(acc, p)
            T.gemm(p, B_s, acc2, policy=T.GemmWarpPolicy.FullRow)
            T.copy(p, P[bx * M:(bx + 1) * M, :])
            T.copy(acc2, Out)

    body = _source(other, "sm_80")
    assert "p_regs_ptr" not in body and "tl_regs_copy16(" not in body
