"""Warp-role branches (``if tx >= 128:`` / ``elif 128 <= tx < 256:``): code inside a branch on the thread index
runs on that branch's threads only, as in the reference TileLang.

- core's LayoutInference spreads a fragment used only there over the branch's threads (``tl.thread_range``) and
  PartitionParallel splits the branch's parallel loops over them (thread index minus the branch's first thread);
- core's InsertBarriers puts the barriers such a branch needs inside it as named barriers of its threads, which
  the CUDA backend emits as ``bar.sync id, count`` (they would be a ``__syncthreads`` under divergence otherwise);
- a TMEM read (``T.copy(tmem, fragment)``) in the second warpgroup's branch reads with that warpgroup.

Checked with the SIMT emulator (results, and that every barrier is reached by the threads it counts) and, where
nvcc is present, compiled to a cubin.
"""

from __future__ import annotations

import re

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T

SM90 = {"kind": "cuda", "arch": "sm_90a"}
SM100 = {"kind": "cuda", "arch": "sm_100a"}


def staged_scale(cond: str, threads: int = 256):
    """B = 2 * A through a fragment and a shared tile, all inside one branch on the thread index."""

    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=threads):
            L = T.alloc_fragment((64, 64), "float32")
            S = T.alloc_shared((64, 64), "float16")
            tx = T.get_thread_binding()
            if cond == "ge128":
                if tx >= 128:
                    T.copy(A, L)
                    for i, j in T.Parallel(64, 64):
                        L[i, j] = L[i, j] * 2
                    T.copy(L, S)
                    T.copy(S, B)
            else:  # a warp-role chain: the work sits in the last `elif`
                if tx < 32:
                    T.evaluate(0)
                elif tx // 32 == 2:
                    T.evaluate(0)
                elif 128 <= tx < 256:
                    T.copy(A, L)
                    for i, j in T.Parallel(64, 64):
                        L[i, j] = L[i, j] * 2
                    T.copy(L, S)
                    T.copy(S, B)
    return k


@pytest.mark.parametrize("cond", ["ge128", "elif_chain"])
def test_fragment_and_barrier_in_thread_branch(cond):
    art = tilelang.lower(staged_scale(cond), target=SM90)
    src = art.kernel_source
    assert "tl_named_barrier_sync(3, 128)" in src
    body = src[src.index("__global__ void"):]
    assert "__syncthreads" not in body
    # the fragment is spread over the branch's 128 threads: 64 * 64 / 128 = 32 floats (8 float4) each
    assert re.search(r"float4 L_local_ptr\[8\]", src), src
    a, b = torch.randn(64, 64), torch.zeros(64, 64, dtype=torch.float16)
    stats = emulate(art, a, b)
    assert stats.get("named_barriers", 0) > 0
    torch.testing.assert_close(b, (a * 2).half())


def test_barrier_in_branch_of_part_of_a_warp_is_refused():
    with pytest.raises(tilelang.errors.LoweringError, match="whole warps"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=128):
                S = T.alloc_shared((64,), "float32")
                tx = T.get_thread_binding()
                if tx < 16:
                    for i in T.Parallel(64):
                        S[i] = A[i]
                    for i in T.Parallel(64):
                        B[i] = S[63 - i]
        tilelang.lower(k, target=SM90)


def tmem_epilogue():
    """The blockscaled example's epilogue shape: an MMA warp fills TMEM, the second warpgroup reads it out."""

    @T.prim_func
    def k(A: T.Tensor((128, 64), "bfloat16"), B: T.Tensor((64, 128), "bfloat16"), C: T.Tensor((128, 128), "bfloat16")):
        with T.Kernel(1, threads=256):
            A_s = T.alloc_shared((128, 64), "bfloat16")
            B_s = T.alloc_shared((64, 128), "bfloat16")
            C_tmem = T.alloc_tmem([128, 128], "float32")
            C_l = T.alloc_fragment((128, 128), "float32")
            C_s = T.alloc_shared((128, 64), "bfloat16")
            full = T.alloc_barrier([1])
            done = T.alloc_barrier([1])
            tx = T.get_thread_binding()
            T.copy(A, A_s)
            T.copy(B, B_s)
            if tx < 32:
                T.tcgen05_gemm(A_s, B_s, C_tmem, mbar=done, clear_accum=True)
                T.tcgen05_mma_arrive(full)
            elif 128 <= tx < 256:
                T.mbarrier_wait_parity(full, 0)
                T.copy(C_tmem, C_l)
                for i in T.unroll(2):
                    T.copy(C_l[:, i * 64:(i + 1) * 64], C_s)
                    T.copy(C_s, C[0, i * 64])
    return k


def test_tmem_read_in_second_warpgroup_branch():
    src = tilelang.lower(tmem_epilogue(), target=SM100).kernel_source
    body = src[src.index("__global__ void"):]
    assert "tl_tcgen05_ld_32x32b_n" in body
    assert "tl_named_barrier_sync(3, 128)" in body
    # the second warpgroup reads datapath tx - 128 (not a branch that can never run)
    assert "tl_tcgen05_mma" in body


@needs_nvcc
@pytest.mark.parametrize("build", ["sm90_branch", "sm100_tmem_epilogue"])
def test_warp_role_kernels_compile(build):
    from tilelang_cuda.compiler import compile_artifact

    if build == "sm90_branch":
        art = tilelang.lower(staged_scale("elif_chain"), target=SM90)
    else:
        art = tilelang.lower(tmem_epilogue(), target=SM100)
    built = compile_artifact(art)
    assert built.cubin
    # the named barrier (the helper's operands are registers)
    assert re.search(r"\bbar\.sync\s+%r\d+, %r\d+;", built.ptx)
    if build == "sm90_branch":  # all of this kernel's barriers are in the branch: no bar.sync 0 (__syncthreads)
        assert not re.search(r"\b(bar|barrier)\.sync(\.aligned)?\s+0;", built.ptx)


def test_emulator_catches_the_race_without_the_named_barrier():
    from cuda_emulator import EmulationError

    art = tilelang.lower(staged_scale("ge128"), target=SM90)
    a, b = torch.randn(64, 64), torch.zeros(64, 64, dtype=torch.float16)
    with pytest.raises(EmulationError, match="shared race"):
        emulate(art, a, b, patch={"tl_named_barrier_sync": lambda emu, args: None})


def second_warpgroup_gemm(arch: str):
    """D = A @ B^T computed by the second warpgroup alone (``if 128 <= tx < 256``), its accumulator its own: the
    seesaw MLA kernel's consumer 1 (`deepseek_v32/sparse_mla_fwd_seesaw.py`)."""

    @T.prim_func
    def k(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), D: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=256):
            A_s = T.alloc_shared((64, 64), "float16")
            B_s = T.alloc_shared((64, 64), "float16")
            acc = T.alloc_fragment((64, 64), "float32")
            tx = T.get_thread_binding()
            T.copy(A, A_s)
            T.copy(B, B_s)
            if 128 <= tx < 256:
                T.gemm(A_s, B_s, acc, transpose_B=True, clear_accum=True)
                T.copy(acc, D)

    return tilelang.lower(k, target={"kind": "cuda", "arch": arch})


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_gemm_of_the_second_warpgroup_keeps_its_accumulator_in_registers(arch):
    """The accumulator takes the tensor-core layout over the branch's 128 threads (the layout repeats every
    four warps), not core's generic fragment path: 32 registers a thread, and the product is right."""
    art = second_warpgroup_gemm(arch)
    assert "acc_acc_ptr[32]" in art.kernel_source
    assert ("tl_wgmma_" if arch == "sm_90a" else "tl_mma_f16_f32") in art.kernel_source
    torch.manual_seed(0)
    a, b = torch.randn(64, 64, dtype=torch.float16), torch.randn(64, 64, dtype=torch.float16)
    d = torch.zeros(64, 64)
    emulate(art, a, b, d)
    torch.testing.assert_close(d, a.float() @ b.float().T, rtol=1e-2, atol=1e-2)
