"""Barriers inside conditions the whole block evaluates alike, on targets with one block-wide barrier (no named
barriers: ROCm, WebGPU, Metal): the persistent loop ``while bx < num_blocks`` of the reference's AMD flash
attention holds the barriers its shared tiles need, one of them closing each trip (the next trip refills the tile
others may still read); a loop on a thread's own index still cannot. The CUDA side (named barriers) is executed by
the SIMT emulator in ``plugins/tilelang-cuda/tests/test_while_loop_barriers.py``."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

ROWS, WIDTH, BLOCKS = 6, 64, 2


@T.prim_func
def persistent_reverse(A: T.Tensor((ROWS, WIDTH), "float32"), B: T.Tensor((ROWS, WIDTH), "float32")):
    """Each block walks rows ``b, b + BLOCKS, ...``: a row goes through a shared tile and comes out reversed (the
    tile is written and read by different threads, so each trip needs barriers)."""
    with T.Kernel(BLOCKS, threads=WIDTH) as b:
        row = T.alloc_var(T.int32)
        row = b
        while row < ROWS:
            S = T.alloc_shared((WIDTH,), "float32")
            for i in T.Parallel(WIDTH):
                S[i] = A[row, i] + 1.0
            for i in T.Parallel(WIDTH):
                B[row, i] = S[WIDTH - 1 - i] * 2.0 - 2.0
            row = row + BLOCKS


@T.prim_func
def per_thread_loop(A: T.Tensor((WIDTH,), "float32"), B: T.Tensor((WIDTH,), "float32")):
    with T.Kernel(1, threads=WIDTH) as _:
        tx = T.get_thread_binding()
        i = T.alloc_var(T.int32)
        i = tx
        while i < WIDTH:  # how many trips depends on the thread
            S = T.alloc_shared((WIDTH,), "float32")
            S[tx] = A[i]
            B[i] = S[WIDTH - 1 - tx]
            i = i + 2 * WIDTH


@pytest.mark.backend("rocm")
def test_a_barrier_inside_a_block_uniform_while_loop_on_rocm():
    art = tilelang.lower(persistent_reverse, target={"kind": "hip", "mcpu": "gfx942"})
    # inside the loop: after the tile is filled, and at the end of a trip (the next one refills it)
    assert art.kernel_source.count("s_barrier") == 2


@pytest.mark.backend("webgpu")
def test_a_block_uniform_while_loop_with_barriers_runs_on_webgpu():
    from tilelang.testing import requires_webgpu

    if requires_webgpu.reason is not None:
        pytest.skip(requires_webgpu.reason)
    kernel = tilelang.compile(persistent_reverse, target="webgpu", execution_backend="wgpu")
    assert kernel.get_kernel_source().split("while", 1)[1].count("workgroupBarrier()") == 2
    a = torch.randn(ROWS, WIDTH)
    b = torch.zeros(ROWS, WIDTH)
    kernel(a, b)
    torch.testing.assert_close(b, 2.0 * a.flip(1), rtol=1e-5, atol=1e-5)


@pytest.mark.backend("rocm")
def test_a_loop_on_the_thread_index_still_cannot_hold_a_barrier():
    with pytest.raises(LoweringError, match="Cannot insert syncs inside condition"):
        tilelang.lower(per_thread_loop, target={"kind": "hip", "mcpu": "gfx942"})
