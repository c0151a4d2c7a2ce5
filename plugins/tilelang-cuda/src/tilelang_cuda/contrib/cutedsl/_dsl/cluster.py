"""Thread-block cluster barriers and rank, and cluster launch control (sm_100 ``clusterlaunchcontrol``) on the
CuTe DSL."""

from __future__ import annotations

import cutlass.cute as cute
from cutlass.base_dsl.typing import Int32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, smem_addr


def cluster_arrive_relaxed():
    """Arrive at the cluster barrier without ordering memory (``barrier.cluster.arrive.relaxed.aligned``)."""
    cute.arch.cluster_arrive_relaxed(aligned=True)


def cluster_arrive():
    """Arrive at the cluster barrier, releasing this thread's writes (``barrier.cluster.arrive.aligned``)."""
    cute.arch.cluster_arrive(aligned=True)


def cluster_wait():
    """Wait for all threads of the cluster to arrive (``barrier.cluster.wait.aligned``)."""
    cute.arch.cluster_wait()


def cluster_sync():
    """`cluster_arrive` then `cluster_wait`."""
    cluster_arrive()
    cluster_wait()


def block_rank_in_cluster() -> Int32:
    """This block's rank in its cluster (``%cluster_ctarank``)."""
    return Int32(asm(T.i32(), [], "mov.u32 $0, %cluster_ctarank;", "=r", side_effects=False))


def _try_cancel(result_ptr, mbar_ptr, multicast):
    scope = ".multicast::cluster::all" if multicast else ""
    asm(None, [smem_addr(result_ptr), smem_addr(mbar_ptr)],
        f"clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes{scope}.b128 [$0], [$1];",
        "r,r")


def clc_try_cancel(result_ptr, mbar_ptr):
    """Ask to cancel a not-yet-launched cluster and take over its work: the 16-byte response lands at
    `result_ptr` (shared, 16-byte aligned) and completes on mbarrier `mbar_ptr` (sm_100+)."""
    _try_cancel(result_ptr, mbar_ptr, False)


def clc_try_cancel_multicast(result_ptr, mbar_ptr):
    """`clc_try_cancel` with the response delivered to every block of the cluster."""
    _try_cancel(result_ptr, mbar_ptr, True)


def _query(result_ptr, query):
    """One ``clusterlaunchcontrol.query_cancel`` of the response at `result_ptr`."""
    dtype, constraint, mov = ("pred", "r", "selp.u32 $0, 1, 0, p;") if query == "is_canceled" else \
        ("b32", "r", "mov.u32 $0, v;")
    target = "p" if dtype == "pred" else "v"
    text = (f"{{ .reg .b128 resp; .reg .{dtype} {target}; ld.shared.b128 resp, [$1]; "
            f"clusterlaunchcontrol.query_cancel.{query}.{dtype}.b128 {target}, resp; "
            f"{mov} }}")
    return Int32(asm(T.i32(), [smem_addr(result_ptr)], text, f"={constraint},r"))


def clc_is_canceled(result_ptr) -> Int32:
    """1 if the response at `result_ptr` cancelled a cluster (its work is this block's to do), else 0."""
    return _query(result_ptr, "is_canceled")


def clc_get_first_ctaid_x(result_ptr) -> Int32:
    """x of the first block of the cluster the response at `result_ptr` cancelled."""
    return _query(result_ptr, "get_first_ctaid::x")


def clc_get_first_ctaid_y(result_ptr) -> Int32:
    """y of the first block of the cancelled cluster."""
    return _query(result_ptr, "get_first_ctaid::y")


def clc_get_first_ctaid_z(result_ptr) -> Int32:
    """z of the first block of the cancelled cluster."""
    return _query(result_ptr, "get_first_ctaid::z")

