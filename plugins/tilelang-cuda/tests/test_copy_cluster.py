"""``T.copy_cluster`` on sm_90a, compiled with nvcc; the kernels are the reference's regression kernels
(testing/python/cuda/test_tma_dsmem.py) for the distributed shared-memory copy (``dst_block=``):

- with ``remote_barrier`` and 16-byte runs: one thread arrives on the destination CTA's barrier expecting the bytes
  (``mbarrier.arrive.expect_tx.release.cluster.shared::cluster``) and issues one
  ``cp.async.bulk.shared::cluster.shared::cta`` per contiguous run (a 2-D / 3-D slice: one per row), so a barrier
  initialised with one arrival serves any number of runs;
- other copies store element by element through ``mapa`` addresses; with a barrier (runs not 16-byte multiples,
  with the reference's warning) a block barrier and one remote arrival follow.

Running them needs a cluster GPU (the emulator runs the blocks of a cluster one after another and does not model
cross-CTA data); these tests check the lowering and the PTX.
"""

from __future__ import annotations

import re
import warnings

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

SM90 = {"kind": "cuda", "arch": "sm_90a"}
BULK = "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
REMOTE_EXPECT = "mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64"
REMOTE_ARRIVE = "mbarrier.arrive.release.cluster.shared::cluster.b64"


def _ptx(prim_func) -> str:
    from tilelang_cuda.compiler import compile_artifact

    return compile_artifact(tilelang.lower(prim_func, target=SM90)).ptx


def store_cluster(N: int):
    @T.prim_func
    def kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            s_src = T.alloc_shared((N,), "float32")
            s_dst = T.alloc_shared((N,), "float32")
            s_barrier = T.alloc_cluster_barrier([1])
            T.fill(s_src, 0.0)
            T.fill(s_dst, 0.0)
            T.cluster_sync()
            if pid == 0:
                for i in T.Parallel(N):
                    s_src[i] = A[i]
                T.copy_cluster(s_src, s_dst, dst_block=1, remote_barrier=s_barrier[0])
            if pid == 1:
                T.mbarrier_wait_parity(s_barrier[0], 0)
                for i in T.Parallel(N):
                    B[i] = s_dst[i]

    return kernel


def store_cluster_no_barrier(N: int):
    @T.prim_func
    def kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
            s_src = T.alloc_shared((N,), "float32")
            s_dst = T.alloc_shared((N,), "float32")
            T.fill(s_src, 0.0)
            T.fill(s_dst, 0.0)
            T.cluster_sync()
            if pid == 0:
                for i in T.Parallel(N):
                    s_src[i] = A[i]
                T.copy_cluster(s_src, s_dst, dst_block=1)
            T.cluster_sync()
            if pid == 1:
                for i in T.Parallel(N):
                    B[i] = s_dst[i]

    return kernel


def store_cluster_slice(shape_full, tile):
    """A slice [0:.., 0:N_tile] of wider tiles: rows of N_tile elements that are not contiguous (2-D or 3-D)."""
    if len(shape_full) == 2:
        M, n_full = shape_full

        @T.prim_func
        def kernel2(A: T.Tensor((M, tile), "float32"), B: T.Tensor((M, tile), "float32")):
            with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)) as pid:
                s_src = T.alloc_shared((M, n_full), "float32")
                s_dst = T.alloc_shared((M, n_full), "float32")
                s_barrier = T.alloc_cluster_barrier([1])
                T.fill(s_src, 0.0)
                T.fill(s_dst, 0.0)
                T.cluster_sync()
                if pid == 0:
                    for i, j in T.Parallel(M, tile):
                        s_src[i, j] = A[i, j]
                    T.copy_cluster(s_src[0:M, 0:tile], s_dst[0:M, 0:tile], dst_block=1,
                                   remote_barrier=s_barrier[0])
                if pid == 1:
                    T.mbarrier_wait_parity(s_barrier[0], 0)
                    for i, j in T.Parallel(M, tile):
                        B[i, j] = s_dst[i, j]

        return kernel2
    D, M, n_full = shape_full

    @T.prim_func
    def kernel3(A: T.Tensor((D, M, tile), "float32"), B: T.Tensor((D, M, tile), "float32")):
        with T.ClusterKernel(2, threads=D * M * tile, cluster_dims=(2, 1, 1)) as pid:
            s_src = T.alloc_shared((D, M, n_full), "float32")
            s_dst = T.alloc_shared((D, M, n_full), "float32")
            s_barrier = T.alloc_cluster_barrier([1])
            T.fill(s_src, 0.0)
            T.fill(s_dst, 0.0)
            T.cluster_sync()
            if pid == 0:
                for d, i, j in T.Parallel(D, M, tile):
                    s_src[d, i, j] = A[d, i, j]
                T.copy_cluster(s_src[0:D, 0:M, 0:tile], s_dst[0:D, 0:M, 0:tile], dst_block=1,
                               remote_barrier=s_barrier[0])
            if pid == 1:
                T.mbarrier_wait_parity(s_barrier[0], 0)
                for d, i, j in T.Parallel(D, M, tile):
                    B[d, i, j] = s_dst[d, i, j]

    return kernel3


@needs_nvcc
def test_contiguous_copy_is_one_bulk_copy_to_the_peer():
    src = tilelang.lower(store_cluster(128), target=SM90).kernel_source
    assert src.count("tl_bulk_copy_to_cluster(") == 1  # the one call (its definition is in barrier.cuh)
    assert '#include "tilelang_cuda/barrier.cuh"' in src
    assert "tl_mbarrier_arrive_expect_tx_cluster((&(s_barrier_ptr[0])), 1, 512)" in src
    ptx = _ptx(store_cluster(128))
    assert ptx.count(BULK) == 1 and REMOTE_EXPECT in ptx
    assert "mapa.shared::cluster.u32" in ptx and "fence.proxy.async.shared::cta" in ptx


@needs_nvcc
@pytest.mark.parametrize("shape_full, tile, runs", [((4, 64), 32, 4), ((2, 4, 32), 16, 8)])
def test_a_slice_is_one_bulk_copy_per_row(shape_full, tile, runs):
    src = tilelang.lower(store_cluster_slice(shape_full, tile), target=SM90).kernel_source
    body = src[src.index("__global__"):]
    assert body.count("tl_bulk_copy_to_cluster(") == runs
    assert "tl_st_cluster" not in body
    # one arrival carries every run's bytes: the barrier keeps its count of 1
    assert f"tl_mbarrier_arrive_expect_tx_cluster((&(s_barrier_ptr[0])), 1, {runs * tile * 4})" in body
    assert "tl_mbarrier_init((&(s_barrier_ptr[0])), 1)" in body
    assert _ptx(store_cluster_slice(shape_full, tile)).count(BULK) == runs


@needs_nvcc
def test_runs_that_are_not_16_byte_multiples_store_elementwise_and_arrive_once():
    with pytest.warns(UserWarning, match="Cluster bulk copy size 508 bytes is not a multiple of 16"):
        src = tilelang.lower(store_cluster(127), target=SM90).kernel_source
    body = src[src.index("__global__"):]
    assert "tl_bulk_copy_to_cluster" not in body and "tl_st_cluster(" in body
    # the stores, a block barrier, then thread 0's one remote arrival
    tail = body[body.index("tl_st_cluster("):]
    assert re.search(r"tl_named_barrier_sync\(0, 128\);\s*if \(\(\(int\)threadIdx\.x\) == 0\) \{\s*"
                     r"tl_mbarrier_arrive_cluster\(\(&\(s_barrier_ptr\[0\]\)\), 1\);", tail)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ptx = _ptx(store_cluster(127))
    assert "mapa.u64" in ptx and REMOTE_ARRIVE in ptx and BULK not in ptx
    with pytest.warns(UserWarning, match="Cluster bulk copy row size 124 bytes is not a multiple of 16"):
        tilelang.lower(store_cluster_slice((4, 64), 31), target=SM90)


@needs_nvcc
def test_without_a_barrier_the_copy_stores_through_mapa():
    src = tilelang.lower(store_cluster_no_barrier(128), target=SM90).kernel_source
    body = src[src.index("__global__"):]
    assert "tl_st_cluster(" in body and "tl_bulk_copy_to_cluster" not in body
    assert "tl_mbarrier_arrive_cluster" not in body
    ptx = _ptx(store_cluster_no_barrier(128))
    assert "mapa.u64" in ptx and "barrier.cluster.arrive" in ptx


def test_an_elementwise_copy_with_a_barrier_in_part_of_the_block_is_refused():
    @T.prim_func
    def kernel(A: T.Tensor((127,), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)):
            s_src = T.alloc_shared((127,), "float32")
            s_dst = T.alloc_shared((127,), "float32")
            bar = T.alloc_cluster_barrier([1])
            tx = T.get_thread_binding()
            if tx < 32:
                T.copy_cluster(s_src, s_dst, dst_block=1, remote_barrier=bar[0])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(LoweringError, match="runs in the whole block"):
            tilelang.lower(kernel, target=SM90)


def test_dst_block_copies_shared_tiles_only():
    @T.prim_func
    def kernel(A: T.Tensor((128,), "float32")):
        with T.ClusterKernel(2, threads=128, cluster_dims=(2, 1, 1)):
            s_dst = T.alloc_shared((128,), "float32")
            T.copy_cluster(A, s_dst, dst_block=1)

    with pytest.raises(LoweringError, match="the source must be a shared tile"):
        tilelang.lower(kernel, target=SM90)


# ------------------------------------------------------------------------------------------------ multicast loads
def multicast_demo(M, N, block_M, block_N, cluster_mask, rounds=1):
    """The reference's test_tma_multicast_demo kernel (a cluster of 4 along x), its copy repeated `rounds` times."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
        with T.ClusterKernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128,
                             cluster_dims=(4, 1, 1)) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), "float16")
            for _ in T.serial(rounds):
                T.copy_cluster(A[by * block_M, bx * block_N], A_shared, cluster_mask=cluster_mask)
                T.copy(A_shared, B[by * block_M, bx * block_N])

    return kernel


@needs_nvcc
def test_multicast_load_is_issued_by_the_lowest_rank_and_awaited():
    src = tilelang.lower(multicast_demo(1024, 1024, 128, 64, 0b0011), target=SM90).kernel_source
    body = src[src.index("{", src.index("__global__ void __cluster")):]
    # a one-arrival barrier, ready in every CTA (cluster barrier) before any multicast completes bytes on it
    assert re.search(r"tl_mbarrier_init\(\(&\((\w+)\[0\]\)\), 1\);\s*tl_fence_barrier_init\(\);\s*\}\s*"
                     r"tl_cluster_sync\(\);", body)
    issue = body[body.index("tl_mbarrier_expect_tx"):]
    assert "tl_mbarrier_expect_tx((&(buf_ptr[0])), 16384)" in body  # 128 x 64 halves
    assert "if (((3 >> tl_cluster_ctarank()) & 1) == 1)" in issue and "if (tl_cluster_ctarank() == 0)" in issue
    assert "(ushort)3" in issue and "tl_tma_copy_load_2d(" in issue  # ranks outside the mask load their own box
    assert issue.index("tl_mbarrier_arrive(") < issue.index("tl_mbarrier_wait_parity((&(buf_ptr[0])), 0)")
    ptx = _ptx(multicast_demo(1024, 1024, 128, 64, 0b0011))
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster" in ptx
    assert "barrier.cluster.arrive" in ptx and "mbarrier.try_wait.parity" in ptx


@pytest.mark.parametrize("rounds", [1, 3])
def test_multicast_copy_runs_in_the_emulator_when_the_mask_is_the_issuing_cta(rounds):
    """Rank 0 multicasts to itself only; ranks 1-3 take the unicast path; every CTA waits on its barrier (set up
    anew, at phase 0, by each copy)."""
    import torch
    from cuda_emulator import emulate

    a = torch.randn(128, 256, dtype=torch.float16)
    b = torch.zeros_like(a)
    stats = emulate(tilelang.lower(multicast_demo(128, 256, 64, 64, 0b0001, rounds), target=SM90), a, b)
    assert torch.equal(a, b)
    assert stats["tma_multicast"] == 2 * rounds and stats["tma"] == 8 * rounds  # 2 clusters of 4 CTAs


def test_multicast_needs_a_global_source_and_no_remote_barrier():
    from tilelang.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match="remote_barrier= signals a dst_block= copy"):
        @T.prim_func
        def k1(A: T.Tensor((64, 64), "float16")):
            with T.ClusterKernel(2, threads=128, cluster_dims=2):
                S = T.alloc_shared((64, 64), "float16")
                bar = T.alloc_cluster_barrier([1])
                T.copy_cluster(A, S, cluster_mask=0b11, remote_barrier=bar[0])

    @T.prim_func
    def k2(A: T.Tensor((64, 64), "float16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2):
            S = T.alloc_shared((64, 64), "float16")
            D = T.alloc_shared((64, 64), "float16")
            T.copy_cluster(S, D, cluster_mask=0b11)

    with pytest.raises(LoweringError, match="TMA load from a global tensor into a shared tile"):
        tilelang.lower(k2, target=SM90)
