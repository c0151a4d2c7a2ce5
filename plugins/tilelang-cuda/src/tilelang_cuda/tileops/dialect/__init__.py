"""Lowerings of the CUDA dialect's intrinsics (`tilelang_cuda.language`) to the inline-PTX helpers of the plugin's
headers (``include/tilelang_cuda/*.cuh``, `tilelang_cuda.intrinsics.device`), run by core's LowerIntrinsics.

Each construct names the lowest architecture that has its instruction (`requirements`); on an older CUDA target
the lowering raises a LoweringError naming the construct, the target's arch and that architecture. On any
other target kind the priority -1 implementations of `elsewhere_impls` raise the same kind of error (they are
registered for every target when the dialect is first imported).

The lowerings live by topic (`sync`, `launch`, `warps`, `memory`, `rng`, `mma`, `wgmma`, `tma`, `tensorcore`),
each filling the table of `emit`; this module turns the table into the backend's tile-op implementations.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl
from tilelang_cuda.tileops.common import is_cuda
from tilelang_cuda.tileops.dialect import launch, memory, mma, rng, sync, tensorcore, tma, warps, wgmma
from tilelang_cuda.tileops.dialect.emit import LOWER, LowerFn
from tilelang_cuda.tileops.dialect.pointers import with_resolved_pointers
from tilelang_cuda.tileops.dialect.requirements import Requirement, require

TOPICS = (launch, memory, mma, rng, sync, tensorcore, tma, warps, wgmma)  # imported to fill `LOWER`


def _make_impl(op: str, req: Requirement, fn: LowerFn) -> TileOpImpl:
    def lower(ctx: Any) -> Any:
        require(ctx, req)
        return fn(with_resolved_pointers(ctx))

    return TileOpImpl(op, "cuda_dialect", lower, supports_target=is_cuda, priority=10)


def cuda_impls() -> tuple[TileOpImpl, ...]:
    return tuple(_make_impl(op, req, fn) for op, (req, fn) in sorted(LOWER.items()))


# constructs of core's common language this backend lowers (other backends may too): no CUDA-only refusal elsewhere
COMMON = frozenset({"tl.sync_grid"})


def elsewhere_impls() -> tuple[TileOpImpl, ...]:
    """For targets other than CUDA: a LoweringError naming the construct and the CUDA arch that has it."""
    out = []
    for op, (req, _) in sorted(LOWER.items()):
        if op in COMMON:
            continue
        def lower(ctx: Any, req: Requirement = req) -> Any:
            raise ctx.error(f"is a CUDA construct ({req.feature}, {req.arch} and newer); target kind "
                            f"{ctx.target_kind!r} does not have it", "use a CUDA target or the common language")

        out.append(TileOpImpl(op, "cuda_dialect_elsewhere", lower, supports_target=lambda t: not is_cuda(t),
                              priority=-1))
    return tuple(out)


_elsewhere_registered = False


def register_elsewhere() -> None:
    """Register `elsewhere_impls` for every target kind (once)."""
    global _elsewhere_registered
    if _elsewhere_registered:
        return
    from tilelang.backend import ANY_TARGET, register_tile_op_impl

    for impl in elsewhere_impls():
        register_tile_op_impl(impl, target_kind=ANY_TARGET)
    _elsewhere_registered = True


IMPLS = cuda_impls()
