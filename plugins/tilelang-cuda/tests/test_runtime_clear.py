"""``clear_accum=(k == 0)`` inside a ``T.Pipelined`` K loop (the reference's FlashMLA writes it so): the clear is
``if k == 0: T.clear(C)`` in front of the gemm, through the software pipeline, on mma.sync and on wgmma; C
starts with garbage that only the clear removes. Emulated against torch."""

from __future__ import annotations

import pytest
import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T


def _pipelined_gemm(M: int = 64, N: int = 64, K: int = 128, bk: int = 32):
    @T.prim_func
    def g(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128):
            As = T.alloc_shared((M, bk), "float16")
            Bs = T.alloc_shared((N, bk), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.fill(acc, 1e4)
            for k in T.Pipelined(K // bk, num_stages=2):
                T.copy(A[0, k * bk], As)
                T.copy(B[0, k * bk], Bs)
                T.gemm(As, Bs, acc, transpose_B=True, clear_accum=(k == 0))
            T.copy(acc, C)

    return g


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_runtime_clear_in_a_pipelined_loop(arch):
    art = tilelang.lower(_pipelined_gemm(), target={"kind": "cuda", "arch": arch})
    torch.manual_seed(0)
    a, b = torch.randn(64, 128).half(), torch.randn(64, 128).half()
    c = torch.zeros(64, 64)
    emulate(art, a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float().T, rtol=1e-2, atol=1e-2)
