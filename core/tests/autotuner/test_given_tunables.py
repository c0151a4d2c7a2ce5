"""A call that sets a tuned parameter itself is compiled with the call's values, untuned (the reference's rule)."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T

N = 64


@tilelang.autotune(configs=[{"scale": 1}, {"scale": 2}], progress=False, cache_results=False, warmup=1, rep=2)
@tilelang.jit(out_idx=[-1], target="cpu")
def scaled(n, scale=1):
    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, is_cpu=True):
            for i in T.serial(n):
                B[i] = A[i] * T.float32(scale)

    return main


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("call", [lambda: scaled(N, scale=3), lambda: scaled(N, 3), lambda: scaled.compile(N, 3)],
                         ids=["keyword", "positional", "compile"])
def test_a_given_tuned_parameter_is_kept_and_not_tuned(call):
    # example_gemv's gemv_alloc_reducer.compile(block_M=128, ...), gdn's chunk_delta_h kernel(.., block_DK, ..)
    kernel = call()
    a = torch.randn(N)
    torch.testing.assert_close(kernel(a), a * 3)
    assert scaled.tune(N, scale=3).config is None
