"""A function of two ``T.Kernel`` launches (the reference's split / combine flash decoding): TVM's barrier analysis
compares both launches' shared-memory accesses as if one block ran them and put a barrier between the launches,
in the host code (LLVM: "not implemented"). Barriers outside every launch's threads are dropped: the kernel
boundary orders them."""

from __future__ import annotations

import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T


def _split_combine():
    @T.prim_func
    def two(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16")):
        W = T.alloc_global((128, 64), "float16")
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            T.copy(A[bx * 64, 0], S)
            T.copy(S, W[bx * 64, 0])
        with T.Kernel(2, threads=128) as bx:
            S2 = T.alloc_shared((64, 64), "float16")
            F = T.alloc_fragment((64, 64), "float16")
            for _ in T.Pipelined(2, num_stages=2):
                T.copy(W[bx * 64, 0], S2)
                T.copy(S2, F)
            T.copy(F, B[bx * 64, 0])

    return two


def test_two_launches_lower_without_a_barrier_between_them():
    art = tilelang.lower(_split_combine(), target={"kind": "cuda", "arch": "sm_80"})
    assert "tvm_storage_sync" not in str(art.host_mod)
    a, b = torch.randn(128, 64, dtype=torch.float16), torch.zeros(128, 64, dtype=torch.float16)
    emulate(art, a, b)
    torch.testing.assert_close(b, a)
