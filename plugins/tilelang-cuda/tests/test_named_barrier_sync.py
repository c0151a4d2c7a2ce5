"""``T.sync_threads(barrier_id, arrive_count)``: a named barrier of the threads that reach it (``bar.sync id, n``),
not the block-wide ``__syncthreads()`` (which deadlocks inside a branch that only some threads take)."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError
from tilelang_cuda.intrinsics import include_dir


def _kernel():
    @T.prim_func
    def half(A: T.Tensor((512,), T.int32)):
        with T.Kernel(1, threads=512):
            tx = T.get_thread_binding()
            if tx < 256:
                T.sync_threads(3, 256)
                A[tx] = tx

    return half


def test_named_barrier_lowers_to_bar_sync_with_its_id_and_count():
    src = tilelang.lower(_kernel(), target={"kind": "cuda", "arch": "sm_90a"}).kernel_source
    assert "tl_named_barrier_sync(3, 256)" in src
    assert '#include "tilelang_cuda/barrier.cuh"' in src  # the helper's header, whose asm is bar.sync
    assert 'asm volatile("bar.sync %0, %1;' in (include_dir() / "tilelang_cuda" / "barrier.cuh").read_text()
    body = src[src.index("__global__"):]
    assert "__syncthreads()" not in body


def test_named_barrier_needs_both_id_and_count():
    with pytest.raises(KernelTypeError, match="barrier_id, arrive_count"):
        @T.prim_func
        def bad(A: T.Tensor((32,), T.int32)):
            with T.Kernel(1, threads=32):
                T.sync_threads(3)
