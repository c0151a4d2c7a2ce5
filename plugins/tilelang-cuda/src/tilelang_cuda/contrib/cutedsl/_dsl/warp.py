"""Warp shuffles, votes and warp-wide reductions (CUDA's ``__shfl_*_sync`` family) on the CuTe DSL."""

from __future__ import annotations

import cutlass.cute as cute
from cutlass._mlir.dialects import nvvm
from cutlass.base_dsl.typing import Int32, Uint32
from cutlass.cutlass_dsl import T, dsl_user_op

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, ir

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32


@dsl_user_op
def __activemask(*, loc=None, ip=None) -> Uint32:
    """The lanes of the calling warp that execute this (``activemask.b32``)."""
    return Uint32(asm(T.i32(), [], "activemask.b32 $0;", "=r", loc=loc, ip=ip))


def __shfl_down_sync(mask, val, delta, width=WARP_SIZE):
    """`val` of lane ``lane + delta`` within segments of `width` lanes (``shfl.sync.down``)."""
    return cute.arch.shuffle_sync_down(val, offset=delta, mask=mask,
                                       mask_and_clamp=((WARP_SIZE - width) << 8) | 0x1F)


def __shfl_up_sync(mask, val, delta, width=WARP_SIZE):
    """`val` of lane ``lane - delta`` within segments of `width` lanes (``shfl.sync.up``)."""
    return cute.arch.shuffle_sync_up(val, offset=delta, mask=mask, mask_and_clamp=(WARP_SIZE - width) << 8)


def __shfl_sync(mask, val, srcLane, width=WARP_SIZE):
    """`val` of lane `srcLane` of the caller's segment of `width` lanes (``shfl.sync.idx``)."""
    return cute.arch.shuffle_sync(val, offset=srcLane, mask=mask,
                                  mask_and_clamp=((WARP_SIZE - width) << 8) | ((width - 1) & 0x1F))


def __shfl_xor_sync(mask, val, laneMask, width=WARP_SIZE):
    """`val` of lane ``lane ^ laneMask`` within segments of `width` lanes (``shfl.sync.bfly``)."""
    return cute.arch.shuffle_sync_op(val, laneMask, mask=mask, mask_and_clamp=((WARP_SIZE - width) << 8) | 0x1F,
                                     kind=nvvm.ShflKind.bfly)


@dsl_user_op
def __match_any_sync(mask, value, *, loc=None, ip=None) -> Uint32:
    """The lanes of `mask` whose 32-bit `value` equals the caller's (``match.any.sync.b32``, sm_70+)."""
    return Uint32(asm(T.i32(), [ir(value, Int32, loc, ip), ir(mask, Uint32, loc, ip)],
                      "match.any.sync.b32 $0, $1, $2;", "=r,r,r", loc=loc, ip=ip))


@dsl_user_op
def __popc(value, *, loc=None, ip=None) -> Int32:
    """The number of set bits of the 32-bit `value` (``popc.b32``)."""
    return Int32(asm(T.i32(), [ir(value, Uint32, loc, ip)], "popc.b32 $0, $1;", "=r,r", side_effects=False,
                     loc=loc, ip=ip))


def _butterfly(value, combine):
    for offset in (16, 8, 4, 2, 1):
        value = combine(value, __shfl_xor_sync(FULL_MASK, value, offset))
    return value


def warp_reduce_sum(value):
    """The sum of `value` over the 32 lanes, in every lane (butterfly of ``shfl.sync.bfly``)."""
    return _butterfly(value, lambda a, b: a + b)


def warp_reduce_max(value):
    """The maximum of `value` over the 32 lanes, in every lane."""
    from tilelang_cuda.contrib.cutedsl._dsl.reduce import max as _max

    return _butterfly(value, _max)


def warp_reduce_min(value):
    """The minimum of `value` over the 32 lanes, in every lane."""
    from tilelang_cuda.contrib.cutedsl._dsl.reduce import min as _min

    return _butterfly(value, _min)


def warp_reduce_bitand(value):
    """The bitwise AND of the integer `value` over the 32 lanes, in every lane."""
    return _butterfly(value, lambda a, b: a & b)


def warp_reduce_bitor(value):
    """The bitwise OR of the integer `value` over the 32 lanes, in every lane."""
    return _butterfly(value, lambda a, b: a | b)
