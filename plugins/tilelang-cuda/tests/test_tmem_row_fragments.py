"""Fragments tied to tensor-memory copies live one row per thread (`tilelang_cuda.passes.tmem_fragments`): the
Blackwell flash attention's scores come out of TMEM with ``tcgen05.ld`` straight into registers, its online
softmax runs on each thread's own row (no shuffles, no shared staging), and its probabilities go back with
``tcgen05.st``. Executed by the SIMT emulator against torch, in a 128-thread block and in a warp-specialised
block whose softmax warpgroup is one role of three; the PTX is checked too."""

from __future__ import annotations

import re
import shutil

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T

TARGET = {"kind": "cuda", "arch": "sm_100a"}
BF16, F32 = "bfloat16", "float32"


def _attention(seq: int, dim: int, causal: bool, p_in_tmem: bool, threads: int = 128):
    """One head of ``softmax(Q K^T / sqrt(dim)) V`` for 128 queries a block: S and the block's P @ V in TMEM, the
    running output in registers; P goes to the second MMA through TMEM (TS) or shared (SS). With 256 threads the
    two warpgroups split every row's columns."""
    scale = dim ** -0.5 * 1.4426950408889634

    @T.prim_func
    def main(Q: T.Tensor((seq, dim), BF16), K: T.Tensor((seq, dim), BF16), V: T.Tensor((seq, dim), BF16),
             Out: T.Tensor((seq, dim), BF16)):
        with T.Kernel(seq // 128, threads=threads) as bx:
            q_s = T.alloc_shared((128, dim), BF16)
            k_s = T.alloc_shared((128, dim), BF16)
            v_s = T.alloc_shared((128, dim), BF16)
            s_t = T.alloc_tmem([128, 128], F32)
            pv_t = T.alloc_tmem([128, dim], F32)
            s = T.alloc_fragment((128, 128), F32)
            p = T.alloc_fragment((128, 128), BF16)
            pv = T.alloc_fragment((128, dim), F32)
            acc = T.alloc_fragment((128, dim), F32)
            m = T.alloc_fragment((128,), F32)
            m_old = T.alloc_fragment((128,), F32)
            rescale = T.alloc_fragment((128,), F32)
            row_sum = T.alloc_fragment((128,), F32)
            total = T.alloc_fragment((128,), F32)
            done = T.alloc_barrier([1])
            if p_in_tmem:
                p_op = T.alloc_tmem([128, 128], BF16)
            else:
                p_op = T.alloc_shared((128, 128), BF16)
            T.copy(Q[bx * 128:(bx + 1) * 128, :], q_s)
            T.fill(acc, 0)
            T.fill(total, 0)
            T.fill(m, -T.infinity(F32))
            for kb in T.serial(bx + 1 if causal else seq // 128):
                T.copy(K[kb * 128:(kb + 1) * 128, :], k_s)
                T.copy(V[kb * 128:(kb + 1) * 128, :], v_s)
                T.fence_proxy_async()
                T.tcgen05_gemm(q_s, k_s, s_t, transpose_B=True, mbar=done, clear_accum=True)
                T.mbarrier_wait_parity(done, (kb * 2) % 2)
                T.copy(s_t, s)
                if causal:
                    for i, j in T.Parallel(128, 128):
                        s[i, j] = T.if_then_else(bx * 128 + i >= kb * 128 + j, s[i, j], -T.infinity(F32))
                T.copy(m, m_old)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(128):
                    rescale[i] = T.exp2((m_old[i] - m[i]) * scale)
                for i, j in T.Parallel(128, 128):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(128):
                    total[i] = total[i] * rescale[i] + row_sum[i]
                T.copy(s, p)
                T.copy(p, p_op)
                if not p_in_tmem:
                    T.fence_proxy_async()
                T.tcgen05_gemm(p_op, v_s, pv_t, mbar=done, clear_accum=True)
                T.mbarrier_wait_parity(done, (kb * 2 + 1) % 2)
                T.copy(pv_t, pv)
                for i, j in T.Parallel(128, dim):
                    acc[i, j] = acc[i, j] * rescale[i] + pv[i, j]
            for i, j in T.Parallel(128, dim):
                acc[i, j] /= total[i]
            T.copy(acc, Out[bx * 128:(bx + 1) * 128, :])

    return main


def _warp_roles(seq: int, dim: int):
    """The same attention with warp roles (256 threads): threads [128, 160) load K and V, one warp of
    [160, 192) issues the MMAs, the softmax warpgroup [0, 128) owns the rows; mbarriers hand the tiles over. The
    running output stays in TMEM: the softmax warpgroup rescales it there (ld, multiply, st) before the next P V
    MMA accumulates into it."""
    scale = dim ** -0.5 * 1.4426950408889634
    blocks = seq // 128

    @T.prim_func
    def main(Q: T.Tensor((seq, dim), BF16), K: T.Tensor((seq, dim), BF16), V: T.Tensor((seq, dim), BF16),
             Out: T.Tensor((seq, dim), BF16)):
        with T.Kernel(seq // 128, threads=256) as bx:
            q_s = T.alloc_shared((128, dim), BF16)
            k_s = T.alloc_shared((128, dim), BF16)
            v_s = T.alloc_shared((128, dim), BF16)
            s_t = T.alloc_tmem([128, 128], F32)
            p_t = T.alloc_tmem([128, 128], BF16)
            o_t = T.alloc_tmem([128, dim], F32)
            loaded = T.alloc_barrier([32])
            scored = T.alloc_barrier([1])
            softmaxed = T.alloc_barrier([128])
            accumulated = T.alloc_barrier([1])
            s = T.alloc_fragment((128, 128), F32)
            p = T.alloc_fragment((128, 128), BF16)
            o = T.alloc_fragment((128, dim), F32)
            m = T.alloc_fragment((128,), F32)
            m_old = T.alloc_fragment((128,), F32)
            rescale = T.alloc_fragment((128,), F32)
            row_sum = T.alloc_fragment((128,), F32)
            total = T.alloc_fragment((128,), F32)
            tx = T.get_thread_binding()
            if tx < 128:
                T.fill(o, 0)
                T.fill(total, 0)
                T.fill(m, -T.infinity(F32))
                T.copy(o, o_t)
            for kb in T.serial(blocks):
                if 128 <= tx and tx < 160:
                    if kb > 0:
                        T.mbarrier_wait_parity(accumulated, (kb - 1) % 2)
                    if kb == 0:
                        T.copy(Q[bx * 128:(bx + 1) * 128, :], q_s)
                    T.copy(K[kb * 128:(kb + 1) * 128, :], k_s)
                    T.copy(V[kb * 128:(kb + 1) * 128, :], v_s)
                    T.fence_proxy_async()
                    T.mbarrier_arrive(loaded)
                elif 160 <= tx and tx < 192:
                    T.mbarrier_wait_parity(loaded, kb % 2)
                    T.tcgen05_gemm(q_s, k_s, s_t, transpose_B=True, mbar=scored, clear_accum=True)
                    T.mbarrier_wait_parity(softmaxed, kb % 2)
                    T.tcgen05_gemm(p_t, v_s, o_t, mbar=accumulated, clear_accum=False)
                elif tx < 128:
                    T.mbarrier_wait_parity(scored, kb % 2)
                    if kb > 0:
                        T.mbarrier_wait_parity(accumulated, (kb - 1) % 2)
                    T.copy(s_t, s)
                    T.copy(o_t, o)
                    T.copy(m, m_old)
                    T.reduce_max(s, m, dim=1, clear=False)
                    for i in T.Parallel(128):
                        rescale[i] = T.exp2((m_old[i] - m[i]) * scale)
                    for i, j in T.Parallel(128, 128):
                        s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                    T.reduce_sum(s, row_sum, dim=1)
                    for i in T.Parallel(128):
                        total[i] = total[i] * rescale[i] + row_sum[i]
                    for i, j in T.Parallel(128, dim):
                        o[i, j] *= rescale[i]
                    T.copy(s, p)
                    T.copy(p, p_t)
                    T.copy(o, o_t)
                    T.mbarrier_arrive(softmaxed)
            if tx < 128:
                T.mbarrier_wait_parity(accumulated, (blocks - 1) % 2)
                T.copy(o_t, o)
                for i, j in T.Parallel(128, dim):
                    o[i, j] /= total[i]
                T.copy(o, Out[bx * 128:(bx + 1) * 128, :])

    return main


def _reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    s = (q.float() @ k.float().t()) / q.shape[-1] ** 0.5
    if causal:
        s = s.masked_fill(torch.ones_like(s).tril() == 0, float("-inf"))
    return torch.softmax(s, dim=-1) @ v.float()


def _inputs(seq: int, dim: int) -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return tuple(torch.randn(seq, dim).to(torch.bfloat16) for _ in range(3))


def _rows_in_registers(art, fragments: tuple[str, ...], operand_bytes: int) -> None:
    """Each fragment is a thread's row of registers (``<name>_row``), no cross-lane reduction, and the block's
    shared memory holds the MMA operand tiles only (no staging tile stands in for a fragment)."""
    src = art.kernel_source
    assert all(f"{name}_row" in src for name in fragments), [n for n in fragments if f"{n}_row" not in src]
    assert "__shfl" not in src
    shared = sum(k.dynamic_shared_bytes for k in art.launch_plan.kernels)
    assert shared <= operand_bytes + 1024, (shared, operand_bytes)


@pytest.mark.parametrize("causal,p_in_tmem,threads", [(False, True, 128), (True, True, 128), (True, False, 128),
                                                     (True, True, 256)])
def test_attention_rows_stay_in_the_threads_that_read_them_from_tensor_memory(causal, p_in_tmem, threads):
    seq, dim = 256, 64 if threads == 128 else 128
    art = tilelang.lower(_attention(seq, dim, causal, p_in_tmem, threads), target=TARGET)
    src = art.kernel_source
    # two warpgroups: each holds half of every row, the row sums and maxima meet in shared memory
    assert ("row_partials" in src) == (threads == 256)
    tiles = 3 * 128 * dim * 2 + (0 if p_in_tmem else 128 * 128 * 2)  # Q, K, V (and P for the SS MMA), bf16
    tiles += 2 * (threads // 128) * 128 * 4 if threads > 128 else 0  # the partials of the two row reductions
    _rows_in_registers(art, ("s", "p", "pv", "acc", "m", "m_old", "rescale", "row_sum", "total"), tiles)
    assert "tl_tcgen05_ld_32x32b_n(" in src and ("tl_tcgen05_st_32x32b_n(" in src) == p_in_tmem
    q, k, v = _inputs(seq, dim)
    out = torch.zeros(seq, dim, dtype=torch.bfloat16)
    emulate(art, q, k, v, out)
    torch.testing.assert_close(out.float(), _reference(q, k, v, causal), rtol=2e-2, atol=2e-2)


def test_the_softmax_warpgroup_of_a_warp_specialised_kernel_keeps_its_rows():
    seq, dim = 384, 64
    art = tilelang.lower(_warp_roles(seq, dim), target=TARGET)
    _rows_in_registers(art, ("s", "p", "o", "m", "m_old", "rescale", "row_sum", "total"), 3 * 128 * dim * 2)
    q, k, v = _inputs(seq, dim)
    out = torch.zeros(seq, dim, dtype=torch.bfloat16)
    stats = emulate(art, q, k, v, out)
    torch.testing.assert_close(out.float(), _reference(q, k, v, False), rtol=2e-2, atol=2e-2)
    assert stats["tcgen05_mma"] == (seq // 128) ** 2 * (dim // 16 + 128 // 16)


def test_a_fragment_read_across_rows_keeps_core_layout_and_shared_staging():
    """A column reduction (``dim=0``) reads other threads' rows: that fragment goes through shared memory as
    before, and the result is still right."""

    @T.prim_func
    def main(A: T.Tensor((128, 64), F32), Cols: T.Tensor((64,), F32), Rows: T.Tensor((128,), F32)):
        with T.Kernel(1, threads=128):
            t = T.alloc_tmem([128, 64], F32)
            f = T.alloc_fragment((128, 64), F32)
            g = T.alloc_fragment((128, 64), F32)
            cols = T.alloc_fragment((64,), F32)
            rows = T.alloc_fragment((128,), F32)
            T.copy(A, f)
            T.copy(f, t)
            T.copy(t, g)
            T.reduce_sum(g, cols, dim=0)
            T.reduce_max(g, rows, dim=1)
            T.copy(cols, Cols)
            T.copy(rows, Rows)

    art = tilelang.lower(main, target=TARGET)
    # f (from global memory into TMEM) is kept a row a thread; g, read across rows, is core's (staged)
    assert "f_row" in art.kernel_source and "g_row" not in art.kernel_source
    a = torch.randn(128, 64)
    cols, rows = torch.zeros(64), torch.zeros(128)
    emulate(art, a, cols, rows)
    torch.testing.assert_close(cols, a.sum(0), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(rows, a.amax(1))


@needs_nvcc
def test_nvcc_reads_scores_from_tensor_memory_into_registers():
    kernel = tilelang.compile(_attention(256, 64, True, True), target=TARGET)
    body = kernel.export_ptx().split(".entry", 1)[1]
    # 32 columns a load instruction, 4 a store
    assert "tcgen05.ld.sync.aligned.32x32b.x32.b32" in body and "tcgen05.st.sync.aligned.32x32b.x4.b32" in body
    # the rows live in registers: no local-memory frame for them, no shared-memory round trip of the scores
    assert ".local" not in body and "ld.local" not in body
    if shutil.which("cuobjdump") or shutil.which("nvdisasm"):  # the SASS, without a GPU: 2 x 64 columns a load
        loads = re.findall(r"\bLDTM\.", kernel.export_sass())
        assert 0 < len(loads) <= 8, len(loads)


@pytest.mark.parametrize("threads", [128, 256, 384])
def test_rows_and_row_vectors_go_out_to_memory_from_the_threads_holding_them(threads):
    """Global memory -> fragment -> TMEM -> fragment -> global memory, a row maximum and a shifted copy; with
    more than one warpgroup the columns are split, and 384 threads do not split 128 columns into whole chunks:
    that fragment stays core's and goes through shared memory, with the same result."""

    @T.prim_func
    def main(A: T.Tensor((128, 128), F32), Out: T.Tensor((128, 128), BF16), Rows: T.Tensor((128,), F32)):
        with T.Kernel(1, threads=threads):
            t = T.alloc_tmem([128, 128], F32)
            f = T.alloc_fragment((128, 128), F32)
            g = T.alloc_fragment((128, 128), BF16)
            rows = T.alloc_fragment((128,), F32)
            T.copy(A, f)
            T.copy(f, t)
            T.copy(t, f)
            T.reduce_max(f, rows, dim=1)
            for i, j in T.Parallel(128, 128):
                g[i, j] = f[i, j] - rows[i] + j
            T.copy(g, Out)
            T.copy(rows, Rows)

    art = tilelang.lower(main, target=TARGET)
    assert ("f_row" in art.kernel_source) == (threads != 384)
    a = torch.randn(128, 128)
    out, rows = torch.zeros(128, 128, dtype=torch.bfloat16), torch.zeros(128)
    emulate(art, a, out, rows)
    torch.testing.assert_close(rows, a.amax(1))
    torch.testing.assert_close(out, (a - a.amax(1, keepdim=True) + torch.arange(128.0)).to(torch.bfloat16))
