"""Kernels and configurations shared by the scale-out autotuning tests (this module is not installed: the tuner
ships its factories to workers by value)."""

from __future__ import annotations

import torch

import tilelang
import tilelang.language as T

SIZE = 128
# `repeats` accumulates the product that many times: every configuration is correct, and the one with repeats=1
# is many times faster than the others whatever the machine's noise, so the best configuration is deterministic
CONFIGS = [{"block_M": 32, "block_N": 32, "repeats": 512}, {"block_M": 32, "block_N": 32, "repeats": 1},
           {"block_M": 16, "block_N": 16, "repeats": 512}]
BEST = {"block_M": 32, "block_N": 32, "repeats": 1}


@tilelang.jit(out_idx=[-1], target="cpu")
def gemm(M, N, K, block_M=32, block_N=32, block_K=16, repeats=1):
    """C = A @ B (float32): the product accumulated `repeats` times, divided by `repeats`."""

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), is_cpu=True) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float32)
            B_shared = T.alloc_shared((block_K, block_N), T.float32)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for _ in T.serial(repeats):
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_local[i, j] / T.float32(repeats)

    return main


def reference(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    return A @ B


def tune(executor, **profile):
    """Tune `gemm` at SIZE over CONFIGS through `executor`; the `AutoTuneResult`."""
    from tilelang.autotuner import AutoTuner

    tuner = AutoTuner(gemm, CONFIGS, executor=executor, progress=False, cache_results=False, warmup=2, rep=20,
                      ref_prog=reference, **profile)
    return tuner.run(SIZE, SIZE, SIZE)


def check_result(result) -> None:
    """The tuned kernel is the deterministic best and computes A @ B."""
    assert result.config == BEST, result.trials
    assert all(t["error"] is None and t["latency"] > 0 for t in result.trials), result.trials
    assert result.ref_latency is not None and result.ref_latency > 0
    a, b = torch.randn(SIZE, SIZE), torch.randn(SIZE, SIZE)
    torch.testing.assert_close(result.kernel(a, b), a @ b, rtol=1e-4, atol=1e-4)


def tune_locally_then_forget(tmp_path, monkeypatch):
    """Tune with a `SerialExecutor` (checked against torch) in a caller cache of its own, then point the caller at
    a fresh cache and forget every kernel built so far: a remote tune afterwards starts from nothing."""
    from tilelang.autotuner import SerialExecutor
    from tilelang.cache.manager import kernel_cache

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "caller-cache"))
    local = tune(SerialExecutor())
    check_result(local)
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "fresh-caller-cache"))
    kernel_cache.clear(disk=False)
    gemm.clear_kernels()
    return local
