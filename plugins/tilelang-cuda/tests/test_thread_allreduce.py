"""``T.tvm_thread_allreduce`` under a ``T.comm_reducer`` scope (the reference's dequantising GEMV reduces its
partial dot products so): lowered by TVM's pass after core's barriers, over ``T.thread_binding`` loops of the
launch's threads; executed by the SIMT emulator against torch."""

from __future__ import annotations

import pytest
import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T


def _row_sums(rows: int, width: int, parts: int = 1):
    """Each block sums rows of `width` elements: thread ``kr`` holds one element, the reduction runs over
    threadIdx.x; `parts` rows a block on threadIdx.y."""

    @T.prim_func
    def main(A: T.Tensor((rows, width), "float32"), C: T.Tensor((rows,), "float32")):
        with T.Kernel(rows // parts, threads=(width, parts)) as bx:
            acc = T.alloc_local((1,), "float32")
            red = T.alloc_local((1,), "float32")
            kr = T.thread_binding(0, width, thread="threadIdx.x")
            ni = T.thread_binding(0, parts, thread="threadIdx.y")
            acc[0] = A[bx * parts + ni, kr] * 2.0
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.cast(0, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], kr, dtype="handle"))
            if kr == 0:
                C[bx * parts + ni] = red[0]

    return main


@pytest.mark.parametrize("width,parts", [(32, 4), (64, 2)])
def test_thread_allreduce_sums_over_the_bound_threads(width, parts):
    art = tilelang.lower(_row_sums(8, width, parts), target={"kind": "cuda", "arch": "sm_80"})
    assert "__shfl_down_sync" in art.kernel_source and "tvm_thread_allreduce" not in art.kernel_source
    torch.manual_seed(0)
    a, c = torch.randn(8, width), torch.zeros(8)
    # TVM's second stage shuffles (and adds) registers the lanes past the partial sums never set, discarding
    # those lanes' results: the emulator reads them as NaN instead of refusing, so a use would show in C
    emulate(art, a, c, poison_locals=True)
    torch.testing.assert_close(c, 2.0 * a.sum(dim=1), rtol=1e-5, atol=1e-5)
