"""Carver hints for a GEMM on this CPU parameterise a real kernel: compiled for target="cpu", run, compared with
torch, and handed to ``tilelang.autotune`` as configurations."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang import carver
from tilelang.carver.arch import CPU, auto_infer_current_arch

pytestmark = pytest.mark.backend("llvm")

M, N, K = 384, 256, 512


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _hints(topk: int) -> list[Any]:
    template = carver.MatmulTemplate(M=M, N=N, K=K, trans_B=False, in_dtype=T.float32, out_dtype=T.float32,
                                     accum_dtype=T.float32)
    return template.with_arch(CPU("cpu")).recommend_hints(topk=topk)


def _config(hint: Any) -> dict[str, int]:
    """The kernel parameters a SIMT hint gives: block tile, K step, thread count, pipeline depth."""
    block_M, block_N = hint.block
    return {"block_M": block_M, "block_N": block_N, "block_K": hint.rstep[0],
            "threads": math.prod(hint.thread) * math.prod(hint.reduce_thread or [1]),
            "num_stages": hint.pipeline_stage}


def matmul(block_M: int, block_N: int, block_K: int, threads: int, num_stages: int) -> Any:
    @T.prim_func
    def gemm(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float32)
            B_shared = T.alloc_shared((block_K, block_N), T.float32)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def test_the_cpu_is_the_inferred_device_here() -> None:
    if torch.cuda.is_available():
        pytest.skip("a GPU is the inferred device on this machine")
    assert isinstance(auto_infer_current_arch(), CPU)


def test_hinted_gemm_compiles_for_the_cpu_and_matches_torch() -> None:
    hints = _hints(topk=3)
    assert len(hints) == 3
    cpu = CPU("cpu")
    a, b = torch.randn(M, K), torch.randn(K, N)
    for hint in hints:
        config = _config(hint)
        assert M * N > config["block_M"] * config["block_N"]  # several blocks: the cores share the grid
        assert K % config["block_K"] == 0 and config["threads"] <= 1024
        assert (config["block_M"] * config["block_K"] + config["block_K"] * config["block_N"]) * 4 <= cpu.smem_cap
        kernel = tilelang.compile(matmul(**config), target="cpu")
        c = torch.zeros(M, N)
        kernel(a, b, c)
        torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)


@tilelang.jit(out_idx=[-1], target="cpu")
def tuned_matmul(block_M: int = 64, block_N: int = 64, block_K: int = 64, threads: int = 16, num_stages: int = 1):
    return matmul(block_M, block_N, block_K, threads, num_stages)


def test_hints_are_autotune_configs() -> None:
    from tilelang.autotuner import AutoTuner, SerialExecutor

    configs = [_config(h) for h in _hints(topk=2)]
    result = AutoTuner(tuned_matmul, configs, executor=SerialExecutor(), progress=False, warmup=1, rep=3,
                       ref_prog=lambda A, B: A @ B).run()
    assert result.config in configs
    assert all(t["error"] is None for t in result.trials)
    a, b = torch.randn(M, K), torch.randn(K, N)
    torch.testing.assert_close(tuned_matmul(**result.config)(a, b), a @ b, atol=1e-3, rtol=1e-3)
