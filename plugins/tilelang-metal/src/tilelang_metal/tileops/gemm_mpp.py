"""``tl.gemm`` on Metal 4 (targets with the ``metal4`` key): MetalPerformancePrimitives cooperative tensors.

The block's simdgroups split C into a ``wm x wn`` grid (each simdgroup's tile a whole number of 16x32
``matmul2d`` pieces, every simdgroup busy); each simdgroup calls one MSL helper (`tilelang_metal.mpp`) with
pointers to its corner of A, B and C, which walks K with C in destination cooperative tensors and writes C back
once. A and B are read where they are: straight from device memory (``T.gemm`` on slices of global tensors, no
threadgroup staging and no barrier) or from threadgroup tiles; C may be a threadgroup tile or a global slice.

Served: fp16 A and B, fp32 or fp16 C (accumulated in fp32, cast on the store), no transposes, M / N / K multiples
of 16 / 32 / 16, constant row strides that keep 4-element vectors aligned, whole simdgroups. Anything else (and a
fragment C, whose thread layout the simdgroup path keeps) is left to `tilelang_metal.tileops.gemm`.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import TileOpImpl, gemm_operands, operand_index
from tilelang.transform import utils as C
from tilelang_metal._tile import SIMD_WIDTH, THREADGROUP_SCOPES, barrier, const_ints, simd_ids
from tilelang_metal.mpp import OP_K, OP_M, OP_N, MppGemmSpec

MAX_PIECES = 8  # 16x32 destination tensors one simdgroup keeps live (16 fp32 registers each per lane)
_SPACE = {"global": "device", "shared": "threadgroup", "shared.dyn": "threadgroup"}
_DTYPE = {"float16": "half", "float32": "float"}


def warp_partitions(m: int, n: int, warps: int) -> list[tuple[int, int]]:
    """Every ``(wm, wn)`` with ``wm * wn == warps`` that gives each simdgroup whole 16x32 pieces."""
    return [(wm, warps // wm) for wm in range(1, warps + 1)
            if warps % wm == 0 and m % (wm * OP_M) == 0 and n % (warps // wm * OP_N) == 0]


def warp_partition(m: int, n: int, warps: int) -> tuple[int, int] | None:
    """The partition whose simdgroup tiles are most balanced in pieces (ties: more simdgroups along N)."""
    options = [p for p in warp_partitions(m, n, warps) if (m // p[0] // OP_M) * (n // p[1] // OP_N) <= MAX_PIECES]
    if not options:
        return None
    return min(options, key=lambda p: (abs(m // (p[0] * OP_M) - n // (p[1] * OP_N)), -p[1]))


def _row_length(region: Any) -> int | None:
    buf = region.source
    shape = const_ints(buf.ty.shape)
    if shape is None or len(buf.strides):
        return None
    return shape[-1]


def _aligned(ctx: Any, region: Any) -> bool:
    """4-element vectors of the region stay aligned: its row length and first column are multiples of 4."""
    ld = _row_length(region)
    if ld is None or ld % 4:
        return False
    return bool(ctx.analyzer.can_prove(tirx.floormod(region.region[-1].min, 4) == 0))


def _whole_tiles(region: Any) -> bool:
    """A global operand's buffer is a whole number of the region's tiles (no partial tile at an edge)."""
    if C.scope_of(region.source) != "global":
        return True
    shape = const_ints(region.source.ty.shape)
    ext = const_ints([r.extent for r in region.region])
    return shape is not None and ext is not None and all(s % e == 0 for s, e in zip(shape[-2:], ext[-2:]))


def _plan(ctx: Any) -> tuple[int, int, int, int, int] | None:
    """``(m, n, k, wm, wn)`` when this lowering serves the call, else None."""
    from tilelang_metal.target import target_metal_supports_metal4

    if not target_metal_supports_metal4(ctx.target) or not ctx.has_threads or ctx.num_threads % SIMD_WIDTH:
        return None
    try:
        a, b, c, ta, tb, _ = gemm_operands(ctx)
    except Exception:
        return None
    if ta or tb:
        return None
    if (str(a.source.ty.dtype), str(b.source.ty.dtype)) != ("float16", "float16"):
        return None
    if str(c.source.ty.dtype) not in _DTYPE or any(C.scope_of(r.source) not in _SPACE for r in (a, b, c)):
        return None
    dims = const_ints([c.region[-2].extent, c.region[-1].extent, a.region[-1].extent])
    if dims is None or dims[0] % OP_M or dims[1] % OP_N or dims[2] % OP_K:
        return None
    if not all(_aligned(ctx, r) and _whole_tiles(r) for r in (a, b, c)):
        return None
    part = warp_partition(dims[0], dims[1], ctx.num_threads // SIMD_WIDTH)
    return None if part is None else (*dims, *part)


def applies(ctx: Any) -> bool:
    """A ``metal4`` target and a call this lowering serves (see the module docstring)."""
    return _plan(ctx) is not None


def _operand(region: Any) -> tuple[str, str]:
    return _SPACE[C.scope_of(region.source)], _DTYPE[str(region.source.ty.dtype)]


def lower_gemm_mpp(ctx: Any) -> Any:
    """One helper call per simdgroup, fenced by barriers when an operand is in threadgroup memory."""
    plan = _plan(ctx)
    if plan is None:
        raise ctx.error("not served by Metal 4 cooperative tensors (fp16 A/B, fp32/fp16 C, no transposes, "
                        "M/N/K multiples of 16/32/16, A/B/C global or shared)")
    m, n, k, wm, wn = plan
    a, b, c, _, _, clear = gemm_operands(ctx)
    tm, tn = m // wm, n // wn
    spec = MppGemmSpec(_operand(a), _operand(b), _operand(c), tm, tn, k, _row_length(a), _row_length(b),
                       _row_length(c), clear)
    warp, _ = simd_ids(ctx)
    row0, col0 = tirx.floormod(warp, wm) * tm, tirx.floordiv(warp, wm) * tn

    def corner(region: Any, row: Any, col: Any) -> Any:
        return tirx.address_of(tirx.BufferLoad(region.source, operand_index(region, row, col, False)))

    call = tirx.Evaluate(tirx.call_extern("void", spec.name, corner(a, row0, 0), corner(b, 0, col0),
                                          corner(c, row0, col0)))
    if not any(C.scope_of(r.source) in THREADGROUP_SCOPES for r in (a, b, c)):
        return call
    # the helper reaches threadgroup tiles through pointers, which barrier analysis does not see
    return C.seq([barrier(), call, barrier()])


GEMM_MPP = TileOpImpl("tl.gemm", "metal_cooperative_tensor", lower_gemm_mpp, applies=applies, priority=20)
