"""Lowerings of the dialect's tensor-core constructs: tcgen05 fences and commits, and the ones that need tensor
memory or the GEMM planners (``T.tcgen05_gemm``, ``T.wgmma_gemm``, TMEM copies), which
`tilelang_cuda.passes.tensor_memory` prepares before the tile operators are lowered."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.tileops.dialect import TCGEN05, addr_of, ext

LOWER: dict[str, Any] = {}


def _simple(name: str, helper: str) -> None:
    LOWER[f"tl.{name}"] = (TCGEN05, lambda ctx: ext(helper))


_simple("tcgen05_before_thread_sync", "tl_tcgen05_before_thread_sync")
_simple("tcgen05_after_thread_sync", "tl_tcgen05_after_thread_sync")
LOWER["tl.tcgen05_mma_arrive"] = (TCGEN05, lambda ctx: ext("tl_tcgen05_commit", addr_of(ctx.args[0])))
