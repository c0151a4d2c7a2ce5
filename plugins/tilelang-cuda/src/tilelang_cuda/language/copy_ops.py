"""TMA copies with user-managed synchronisation (``T.tma_copy``), cluster copies (``T.copy_cluster``), the
Blackwell row gather / scatter (``T.tma_gather4`` / ``T.tma_scatter4``) and the raw ``T.tma_load`` /
``T.create_tma_descriptor`` pair.

A load (global -> shared) is issued by one thread per leader scope: ``mbarrier.expect_tx`` of the box's bytes on
`barrier`, then ``cp.async.bulk.tensor``; the threads wait with ``T.mbarrier_wait_parity`` (someone must also
arrive on the barrier: ``T.mbarrier_arrive``). A store (shared -> global) issues the bulk copy and commits its
bulk group; ``T.tma_store_wait`` waits for it.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang_cuda.language._emit import barrier_load, call, const_int, public

__all__ = ["tma_copy", "copy_cluster", "tma_gather4", "tma_gather4_bytes", "tma_scatter4", "tma_load",
           "tma_load_2sm", "create_tma_descriptor"]

EVICTION = {"evict_normal": 0, "evict_first": 1, "evict_last": 2}


def _regions(src: Any, dst: Any, what: str) -> tuple[Any, Any]:
    from tilelang.ir import region as R

    for name, x in (("src", src), ("dst", dst)):
        if not (R.is_buffer(x) or R.is_load(x) or R.is_region(x)):
            raise KernelTypeError(f"{what}: {name} must be a buffer, a region or an element, got {x!r}")
    if R.is_load(src) and not R.is_load(dst):
        dst_r = R.to_region(dst)
        src_r = R.to_region(src, R.region_extents(dst_r))
    else:
        src_r = R.to_region(src)
        dst_r = R.to_region(dst, R.region_extents(src_r))
    se, de = R.squeeze(R.region_extents(src_r)), R.squeeze(R.region_extents(dst_r))
    if len(se) != len(de) or any(R.provably_different(a, b) for a, b in zip(se, de)):
        raise KernelTypeError(f"{what} shape mismatch: src {R.describe(src_r)} has extents "
                              f"{R.format_extents(R.region_extents(src_r))} but dst {R.describe(dst_r)} has "
                              f"{R.format_extents(R.region_extents(dst_r))}")
    return src_r, dst_r


def _eviction(policy: Any) -> int:
    if policy is None:
        return 0
    if policy not in EVICTION:
        raise ValueError(f"eviction_policy must be one of {', '.join(EVICTION)}, got {policy!r}")
    return EVICTION[policy]


@public
def tma_copy(src: Any, dst: Any, *, barrier: Any = None, cluster_mask: int | None = None,
             leader_scope_threads: int | None = None, eviction_policy: str | None = None,
             annotations: dict | None = None) -> Any:
    """One TMA bulk tensor copy between a global tensor region and a shared tile (sm_90a), without a wait.

    Loads need `barrier` (its current phase expects the box's bytes); `cluster_mask` multicasts a load to the
    CTAs of the mask (the lowest rank in the mask issues it). `leader_scope_threads`: one issuing thread per group
    of that many threads (default: the block, or the enclosing ``T.ws`` scope). Stores commit a bulk group.
    """
    from tilelang.ir import region as R

    ann = dict(annotations or {})
    barrier = ann.pop("barrier", barrier)
    cluster_mask = ann.pop("cluster_mask", cluster_mask)
    eviction = ann.pop("eviction_policy", _eviction(eviction_policy))
    src_r, dst_r = _regions(src, dst, "T.tma_copy")
    s_scope, d_scope = R.buffer_scope(src_r.source), R.buffer_scope(dst_r.source)
    load = s_scope == "global" and d_scope.startswith("shared")
    store = s_scope.startswith("shared") and d_scope == "global"
    if not (load or store):
        raise KernelTypeError(f"T.tma_copy copies global -> shared or shared -> global, got {s_scope} -> {d_scope}")
    if load and barrier is None:
        raise KernelTypeError("T.tma_copy: a load (global -> shared) needs barrier= (an element of "
                              "T.alloc_barrier); the copy completes its bytes on it")
    if store and cluster_mask is not None:
        raise KernelTypeError("T.tma_copy: cluster_mask applies to loads only")
    bar = barrier_load(barrier, "T.tma_copy") if load else 0
    leader = 0 if leader_scope_threads is None else const_int(leader_scope_threads, "leader_scope_threads")
    mask = -1 if cluster_mask is None else const_int(cluster_mask, "cluster_mask")
    return call("tma_copy", "handle", [src_r, dst_r, bar, mask, leader, int(eviction)])


@public
def copy_cluster(src: Any, dst: Any, *, dst_block: Any = None, cluster_mask: int | None = None,
                 remote_barrier: Any = None, eviction_policy: str | None = None, coalesced_width: int | None = None,
                 annotations: dict | None = None, loop_layout: Any = None) -> Any:
    """A copy within a thread-block cluster: with `cluster_mask`, a TMA load multicast to the CTAs of the mask
    and awaited here (every thread of every CTA of the cluster must reach it: it starts with a cluster barrier);
    with `dst_block`, this CTA's shared tile written into CTA `dst_block`'s copy of `dst` (distributed shared
    memory), completing on that CTA's copy of `remote_barrier` when given (one arrival), else ordered by the
    user's ``T.cluster_sync``."""
    ann = dict(annotations or {})
    dst_block = ann.pop("dst_block", dst_block)
    cluster_mask = ann.pop("cluster_mask", cluster_mask)
    remote_barrier = ann.pop("barrier", remote_barrier)
    if (dst_block is None) == (cluster_mask is None):
        raise KernelTypeError("T.copy_cluster needs exactly one of dst_block= (shared -> another CTA's shared "
                              "memory) and cluster_mask= (TMA multicast load)")
    src_r, dst_r = _regions(src, dst, "T.copy_cluster")
    bar = 0 if remote_barrier is None else barrier_load(remote_barrier, "T.copy_cluster remote_barrier")
    mask = -1 if cluster_mask is None else const_int(cluster_mask, "cluster_mask")
    if cluster_mask is not None:
        from tilelang_cuda.language.api import alloc_cluster_barrier

        if remote_barrier is not None:
            raise KernelTypeError("T.copy_cluster: remote_barrier= signals a dst_block= copy; a cluster_mask= load "
                                  "is awaited by the copy itself")
        if not 0 < mask < 1 << 16:
            raise ValueError(f"T.copy_cluster: cluster_mask must be a nonzero 16-bit CTA mask, got {cluster_mask}")
        bar = barrier_load(alloc_cluster_barrier([1]), "T.copy_cluster")  # see dialect.tma._multicast_load
    block = -1 if dst_block is None else dst_block
    return call("copy_cluster", "handle", [src_r, dst_r, block, mask, bar, _eviction(eviction_policy)])


def _check_gather(tensor: Any, tile: Any, what: str, tensor_role: str) -> None:
    from tilelang.ir import region as R

    if not R.is_buffer(tensor) or not R.is_buffer(tile):
        raise TypeError(f"{what} takes whole buffers (a 2-D global tensor and a (4, K_box) shared tile)")
    if R.buffer_scope(tensor) != "global":
        raise ValueError(f"{what} {tensor_role} must be a global buffer, got scope={R.buffer_scope(tensor)}")
    if not R.buffer_scope(tile).startswith("shared"):
        raise ValueError(f"{what}: the tile must be a shared buffer, got scope={R.buffer_scope(tile)}")
    if len(R.buffer_shape(tensor)) != 2 or len(R.buffer_shape(tile)) != 2:
        raise ValueError(f"{what} expects a rank-2 global tensor and a rank-2 shared tile")
    if R.buffer_dtype(tensor) != R.buffer_dtype(tile):
        raise ValueError(f"{what} dtype mismatch: {R.buffer_dtype(tensor)} vs {R.buffer_dtype(tile)}")
    if const_int(R.buffer_shape(tile)[0], "tile rows") != 4:
        raise ValueError(f"{what}: the shared tile's leading dim must be 4, got {R.buffer_shape(tile)[0]}")


@public
def tma_gather4(src: Any, dst: Any, col: Any, rows: Any, *, barrier: Any, swizzle: Any = None,
                eviction_policy: str | None = None, annotations: dict | None = None) -> Any:
    """Four rows `rows` of the 2-D global `src`, from column `col`, into the (4, K_box) shared `dst`
    (``tile::gather4``, sm_100a); completes ``tma_gather4_bytes`` bytes on `barrier`. Issue it from one thread
    (``T.shuffle_elect``) after ``T.mbarrier_expect_tx``."""
    _check_gather(src, dst, "tma_gather4", "src")
    rows = list(rows)
    if len(rows) != 4:
        raise ValueError(f"tma_gather4 expects exactly 4 row indices, got {len(rows)}")
    return call("tma_gather4", "handle", [src, dst, col, *rows, barrier_load(barrier, "tma_gather4"),
                                          _eviction(eviction_policy)])


@public
def tma_gather4_bytes(K_box: int, dtype: str) -> int:
    """The bytes one `tma_gather4` of a (4, K_box) tile of `dtype` completes."""
    from tilelang.backend.sdk import dtype_bits

    return (4 * int(K_box) * int(dtype_bits(str(dtype))) + 7) // 8


@public
def tma_scatter4(src: Any, dst: Any, col: Any, rows: Any, *, swizzle: Any = None,
                 eviction_policy: str | None = None, annotations: dict | None = None) -> Any:
    """The (4, K_box) shared `src` into four rows `rows` of the 2-D global `dst` from column `col`
    (``tile::scatter4``, sm_100a); commit and wait with ``T.tma_store_arrive`` / ``T.tma_store_wait``."""
    _check_gather(dst, src, "tma_scatter4", "dst")
    rows = list(rows)
    if len(rows) != 4:
        raise ValueError(f"tma_scatter4 expects exactly 4 row indices, got {len(rows)}")
    return call("tma_scatter4", "handle", [src, dst, col, *rows, _eviction(eviction_policy)])


@public
def create_tma_descriptor(*args: Any) -> Any:
    """A tensor map (TMA descriptor) of 7 + 4 * rank arguments.

    ``(data_type, rank, global_addr, global_shape..., global_stride..., box..., element_stride..., interleave,
    swizzle, l2_promotion, oob_fill)``; `global_addr` must be a kernel
    tensor (``A.data``), whose map the launch encodes."""
    if len(args) < 11:
        raise ValueError(f"T.create_tma_descriptor takes 7 + 4 * rank arguments, got {len(args)}")
    rank = const_int(args[1], "create_tma_descriptor rank")
    if len(args) != 7 + 4 * rank:
        raise ValueError(f"T.create_tma_descriptor of rank {rank} takes {7 + 4 * rank} arguments, got {len(args)}")
    from tilelang_cuda.language.tir import register_buffer

    return call("create_tma_descriptor", "handle", [args[0], rank, register_buffer(args[2]), *args[3:]])


@public
def tma_load(*args: Any) -> Any:
    """``tma_load(descriptor, mbarrier, smem_ptr, coord_0, ..., coord_n[, eviction_policy])``: one bulk tensor copy
    of the descriptor's box at the coordinates (innermost first), completing on `mbarrier`."""
    if len(args) < 4:
        raise ValueError("T.tma_load(descriptor, mbarrier, smem_ptr, coords...) needs at least 4 arguments")
    desc, bar, smem, *coords = args
    return call("tma_load", "handle", [desc, barrier_load(bar, "T.tma_load"), smem, *coords])


@public
def tma_load_2sm(*args: Any) -> Any:
    """`tma_load` for a CTA pair of a Blackwell 2-CTA MMA (sm_100a): the ``cta_group::2`` form of the copy, whose
    bytes complete on the even CTA's copy of `mbarrier` (that CTA expects both CTAs' bytes)."""
    if len(args) < 4:
        raise ValueError("T.tma_load_2sm(descriptor, mbarrier, smem_ptr, coords...) needs at least 4 arguments")
    desc, bar, smem, *coords = args
    return call("tma_load_2sm", "handle", [desc, barrier_load(bar, "T.tma_load_2sm"), smem, *coords])
