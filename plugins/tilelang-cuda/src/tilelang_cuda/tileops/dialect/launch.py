"""Lowerings of the dialect's register and launch attributes: ``setmaxnreg`` and the register annotations of
``T.ws`` scopes, and the markers of cluster dims, minimum blocks per SM and user-source kernels."""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import Lowered
from tilelang_cuda.tileops.dialect.emit import LOWER, ext, lowering
from tilelang_cuda.tileops.dialect.requirements import BASE, CLUSTER, SETMAXNREG


@lowering("set_max_nreg", SETMAXNREG)
def _set_max_nreg(ctx: Any) -> Any:
    count, inc = ctx.int_arg(0), ctx.int_arg(1)
    return ext("tl_set_max_nreg_inc" if inc else "tl_set_max_nreg_dec", count)


def _annotation(ctx: Any) -> Any:
    """Register annotations act through `tilelang_cuda.passes.dialect_scopes` on ``T.ws`` scopes; left outside
    such a kernel they have nothing to apply to."""
    return Lowered(None)


for _name in ("annotate_producer_reg_dealloc", "annotate_consumer_reg_alloc", "no_set_max_nreg"):
    LOWER[f"tl.{_name}"] = (SETMAXNREG, _annotation)


@lowering("cluster_dims", CLUSTER)
def _cluster_dims(ctx: Any) -> Any:
    return ext("tl_cluster_dims_marker", *ctx.args)


@lowering("source_kernel", BASE)
def _source_kernel(ctx: Any) -> Any:
    """`tilelang_cuda.source_kernels` puts the user's source in place of the kernel this marker is in."""
    return ext("tl_source_kernel_marker", *ctx.args)


@lowering("min_blocks_per_sm", BASE)
def _min_blocks(ctx: Any) -> Any:
    return ext("tl_min_blocks_per_sm_marker", *ctx.args)
