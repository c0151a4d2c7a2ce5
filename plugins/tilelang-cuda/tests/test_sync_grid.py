"""``T.sync_grid``: a barrier over every thread of the grid (cooperative groups, the reference's persistent MLA
decode). The kernel calls the grid helper, nvcc builds it, and the launcher launches that kernel cooperatively
(every block resident at once); the launch itself needs a GPU (`test_cuda_gpu.py`)."""

from __future__ import annotations

from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang_cuda.launch_markers import uses_grid_sync

SM80 = {"kind": "cuda", "arch": "sm_80"}


def _rotate_after_doubling():
    @T.prim_func
    def k(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            tx = T.get_thread_binding()
            A[bx * 128 + tx] = A[bx * 128 + tx] * 2.0
            T.sync_grid()  # block 0 reads what block 1 wrote, and the other way round
            B[bx * 128 + tx] = A[(bx * 128 + tx + 128) % 256]

    return k


def test_sync_grid_calls_the_grid_helper_and_marks_a_cooperative_launch():
    src = tilelang.lower(_rotate_after_doubling(), target=SM80).kernel_source
    assert '#include "tilelang_cuda/grid.cuh"' in src and "tl_sync_grid();" in src
    assert uses_grid_sync(src, "k_kernel")
    plain = src.replace("tl_sync_grid();", "")
    assert not uses_grid_sync(plain, "k_kernel")


@needs_nvcc
def test_nvcc_builds_the_grid_barrier():
    kernel = tilelang.compile(_rotate_after_doubling(), target=SM80)
    ptx = kernel.export_ptx()
    body = ptx.split(".entry", 1)[1]
    # cooperative groups' grid barrier: block barriers around a release add and acquire loads of the grid counter
    assert "barrier.sync" in body and "atom.add.release.gpu" in body and "ld.acquire.gpu" in body
