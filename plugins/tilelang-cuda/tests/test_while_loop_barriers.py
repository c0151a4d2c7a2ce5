"""A ``while`` loop whose trips refill a shared tile other threads read: the barrier closing each trip (TVM's
analysis orders accesses within one trip of a ``while`` loop only), in a whole block and in a warp role (a named
barrier). Executed by the SIMT emulator, which reports the race without it."""

from __future__ import annotations

import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T

ROWS, WIDTH, BLOCKS = 6, 64, 2


def _persistent_reverse(role: bool):
    threads = 2 * WIDTH if role else WIDTH

    @T.prim_func
    def main(A: T.Tensor((ROWS, WIDTH), "float32"), B: T.Tensor((ROWS, WIDTH), "float32")):
        with T.Kernel(BLOCKS, threads=threads) as b:
            tx = T.get_thread_binding()
            row = T.alloc_var(T.int32)
            row = b
            S = T.alloc_shared((WIDTH,), "float32")
            if tx < WIDTH:
                while row < ROWS:
                    S[tx] = A[row, tx] + 1.0
                    B[row, tx] = S[WIDTH - 1 - tx] * 2.0 - 2.0
                    row = row + BLOCKS

    return main


def test_each_trip_of_a_while_loop_ends_with_a_barrier():
    for role in (False, True):
        art = tilelang.lower(_persistent_reverse(role), target={"kind": "cuda", "arch": "sm_80"})
        loop = art.kernel_source.split("while", 1)[1]
        barrier = "__syncthreads()" if not role else "tl_named_barrier_sync(3, 64)"
        assert loop.count(barrier) >= 2, art.kernel_source
        a, b = torch.randn(ROWS, WIDTH), torch.zeros(ROWS, WIDTH)
        emulate(art, a, b)
        torch.testing.assert_close(b, 2.0 * a.flip(1), rtol=1e-5, atol=1e-5)
