"""Thread-block clusters (sm_90+): the CTA's rank in its cluster, cluster barriers, and cluster launch control
(sm_100+: cancelling a not-yet-launched cluster to take over its work)."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.language._emit import call, pointer, public

__all__ = ["cluster_arrive_relaxed", "cluster_arrive", "cluster_wait", "cluster_sync", "block_rank_in_cluster",
           "clc_try_cancel", "clc_try_cancel_multicast", "clc_is_canceled", "clc_get_first_ctaid_x",
           "clc_get_first_ctaid_y", "clc_get_first_ctaid_z"]


@public
def cluster_arrive_relaxed() -> Any:
    """``barrier.cluster.arrive.relaxed``: arrive on the cluster barrier without ordering memory."""
    return call("cluster_arrive_relaxed", "handle", [])


@public
def cluster_arrive() -> Any:
    """``barrier.cluster.arrive``: arrive on the cluster barrier (release)."""
    return call("cluster_arrive", "handle", [])


@public
def cluster_wait() -> Any:
    """``barrier.cluster.wait``: wait until every thread of the cluster has arrived (acquire)."""
    return call("cluster_wait", "handle", [])


@public
def cluster_sync() -> Any:
    """Arrive on and wait for the cluster barrier: every thread of every CTA of the cluster."""
    return call("cluster_sync", "handle", [])


@public
def block_rank_in_cluster() -> Any:
    """The rank of this CTA in its cluster (``%cluster_ctarank``), 0 .. cluster size - 1."""
    return call("block_rank_in_cluster", "int32", [], effect="pure")


@public
def clc_try_cancel(result: Any, mbarrier: Any) -> Any:
    """Ask to cancel a cluster not yet launched; the 16-byte response lands in shared `result` and completes
    its bytes on `mbarrier` (sm_100+)."""
    return call("clc_try_cancel", "handle", [pointer(result, "w", "T.clc_try_cancel"),
                                             pointer(mbarrier, "rw", "T.clc_try_cancel")])


@public
def clc_try_cancel_multicast(result: Any, mbarrier: Any) -> Any:
    """`clc_try_cancel` whose response reaches every CTA of the cluster (sm_100+)."""
    return call("clc_try_cancel_multicast", "handle", [pointer(result, "w", "T.clc_try_cancel_multicast"),
                                                       pointer(mbarrier, "rw", "T.clc_try_cancel_multicast")])


@public
def clc_is_canceled(result: Any) -> Any:
    """1 when the response in `result` cancelled a launch (its first CTA id is then valid), else 0."""
    return call("clc_is_canceled", "int32", [pointer(result, "r", "T.clc_is_canceled")])


def _first_ctaid(axis: str) -> Any:
    def first_ctaid(result: Any) -> Any:
        return call(f"clc_get_first_ctaid_{axis}", "uint32", [pointer(result, "r", f"T.clc_get_first_ctaid_{axis}")])

    first_ctaid.__name__ = first_ctaid.__qualname__ = f"clc_get_first_ctaid_{axis}"
    first_ctaid.__doc__ = f"The {axis} block index of the first CTA of the cancelled cluster in `result`."
    first_ctaid.__module__ = __name__
    return public(first_ctaid)


clc_get_first_ctaid_x = _first_ctaid("x")
clc_get_first_ctaid_y = _first_ctaid("y")
clc_get_first_ctaid_z = _first_ctaid("z")
