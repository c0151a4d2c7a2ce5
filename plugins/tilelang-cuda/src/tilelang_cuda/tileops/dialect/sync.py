"""Lowerings of the dialect's synchronisation: mbarriers (initialisation, arrivals, transaction counts, waits),
named barriers, thread-block clusters and cluster launch control, ``fence.proxy.async`` and programmatic
dependent launch."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import Lowered
from tilelang_cuda.tileops.dialect.emit import LOWER, ext, lowering, seq, simple, stmt
from tilelang_cuda.tileops.dialect.pointers import addr_of
from tilelang_cuda.tileops.dialect.requirements import (
    ASYNC_TX,
    BASE,
    CLC,
    CLUSTER,
    CP_ASYNC,
    FENCE_PROXY_ASYNC,
    MBARRIER,
    PDL,
    require,
)


def _bar_first(ctx: Any) -> list[Any]:
    a = list(ctx.args)
    return [addr_of(a[0]), *a[1:]]


# -- mbarriers
def _init_barriers(ctx: Any) -> Any:
    load, *counts = ctx.args
    buf = load.source
    inits = [stmt("tl_mbarrier_init", addr_of(tirx.BufferLoad(buf, [tirx.IntImm("int32", i)])), c)
             for i, c in enumerate(counts)]
    first = tirx.IfThenElse(ctx.linear_thread() == 0, seq([*inits, stmt("tl_fence_barrier_init")]), None)
    sync = tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
    return Lowered(None, [first, sync])


def _init_cluster_barriers(ctx: Any) -> Any:
    """`_init_barriers`, then a cluster barrier: the other CTAs arrive (and TMA completes bytes) on these only
    after every CTA of the cluster initialised its copies."""
    lowered = _init_barriers(ctx)
    return Lowered(None, [lowered.prefix[0], stmt("tl_cluster_sync")])


LOWER["tl.init_barriers"] = (MBARRIER, _init_barriers)
LOWER["tl.init_cluster_barriers"] = (CLUSTER, _init_cluster_barriers)
# a grid-wide barrier (cooperative groups); `tilelang_cuda.launch_markers.uses_grid_sync` makes its kernel's launch
# cooperative
simple("sync_grid", BASE, "tl_sync_grid")
simple("mbarrier_wait_parity", MBARRIER, "tl_mbarrier_wait_parity", arg_fn=_bar_first)
simple("ptx_arrive_barrier", MBARRIER, "tl_mbarrier_arrive", arg_fn=_bar_first)
simple("mbarrier_expect_tx", ASYNC_TX, "tl_mbarrier_expect_tx", arg_fn=_bar_first)
simple("ptx_arrive_barrier_expect_tx", ASYNC_TX, "tl_mbarrier_arrive_expect_tx", arg_fn=_bar_first)
simple("ptx_arrive_cluster_barrier", CLUSTER, "tl_mbarrier_arrive_cluster", arg_fn=_bar_first)
simple("ptx_cp_async_barrier_noinc", CP_ASYNC, "tl_cp_async_mbarrier_arrive_noinc", arg_fn=_bar_first)
simple("ptx_cp_async_barrier", CP_ASYNC, "tl_cp_async_mbarrier_arrive", arg_fn=_bar_first)
simple("ptx_init_barrier_thread_count", MBARRIER, "tl_mbarrier_init", arg_fn=_bar_first)
# core's spellings (tilelang.language.barriers): the same constructs
simple("mbarrier_init", MBARRIER, "tl_mbarrier_init", arg_fn=_bar_first)
simple("mbarrier_arrive_expect_tx", ASYNC_TX, "tl_mbarrier_arrive_expect_tx", arg_fn=_bar_first)


@lowering("mbarrier_arrive", MBARRIER)
def _mbarrier_arrive(ctx: Any) -> Any:
    """``T.mbarrier_arrive(b)``, or with a CTA id the arrival on that CTA's barrier of the cluster (sm_90+)."""
    args = _bar_first(ctx)
    if len(args) > 1:
        require(ctx, CLUSTER)
        return ext("tl_mbarrier_arrive_cluster", *args)
    return ext("tl_mbarrier_arrive", *args)


simple("ptx_fence_barrier_init", CLUSTER, "tl_fence_barrier_init")
simple("named_barrier_arrive", BASE, "tl_named_barrier_arrive")
simple("named_barrier_sync", BASE, "tl_named_barrier_sync")  # core's T.sync_threads(id, n)

# -- fences, programmatic dependent launch
simple("fence_proxy_async", FENCE_PROXY_ASYNC, "tl_fence_proxy_async_all")
simple("pdl_trigger", PDL, "tl_griddepcontrol_launch_dependents")
simple("pdl_sync", PDL, "tl_griddepcontrol_wait")

# -- clusters
simple("cluster_arrive", CLUSTER, "tl_cluster_arrive")
simple("cluster_arrive_relaxed", CLUSTER, "tl_cluster_arrive_relaxed")
simple("cluster_wait", CLUSTER, "tl_cluster_wait")
simple("cluster_sync", CLUSTER, "tl_cluster_sync")
simple("block_rank_in_cluster", CLUSTER, "tl_cluster_ctarank", dtype="int32")
simple("clc_try_cancel", CLC, "tl_clc_try_cancel")
simple("clc_try_cancel_multicast", CLC, "tl_clc_try_cancel_multicast")
simple("clc_is_canceled", CLC, "tl_clc_is_canceled", dtype="int32")
for _axis in "xyz":
    simple(f"clc_get_first_ctaid_{_axis}", CLC, f"tl_clc_get_first_ctaid_{_axis}", dtype="uint32")
