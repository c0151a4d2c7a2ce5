"""Lowerings of the dialect's tensor-core constructs: tcgen05 fences and commits, TMEM deallocation and scale-factor
copies, and ``T.tcgen05_gemm`` (sm_100a).

``T.tcgen05_gemm(A, B, C_tmem, mbar=...)``: one thread of the calling scope (its first, from
`tilelang_cuda.passes.dialect_scopes`) issues a ``tcgen05.mma.cta_group::1.kind::f16`` per N atom and k16 step:
A (M = 128 rows) and B read from their shared tiles through UMMA descriptors on the hardware-swizzled layouts
(`tilelang_cuda.wgmma_layout`; the swizzle pass stores the tiles that way, TMA boxes included), the fp32
accumulator at the TMEM tile's columns (`tilelang_cuda.passes.tensor_memory`); then ``tcgen05.commit`` arrives on
`mbar`. The first k step of a ``clear_accum`` GEMM overwrites the accumulator. No wait: the consumer waits on
`mbar` and reads the accumulator with ``T.copy``.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import dtype_bytes
from tilelang.transform import utils as C
from tilelang_cuda.passes.tensor_memory import slot_of
from tilelang_cuda.tileops.dialect import TCGEN05, Lowered, addr_of, ext, seq, stmt
from tilelang_cuda.wgmma_layout import tile_layout

UMMA_SWIZZLE = {128: 2, 64: 4, 32: 6}  # SM100 descriptor layout field of a swizzle width in bytes
FORMATS = {"float16": 0, "bfloat16": 1}


def instruction_descriptor(m: int, n: int, ab: str, a_k_major: bool, b_k_major: bool) -> int:
    """The 32-bit ``kind::f16`` instruction descriptor (PTX "Instruction descriptor"): f32 D (bits 4-5 = 1), A and B
    formats (7-9, 10-12), MN-major A / B (15, 16), N >> 3 (17-22), M >> 4 (24-28)."""
    return (1 << 4 | FORMATS[ab] << 7 | FORMATS[ab] << 10 | (0 if a_k_major else 1) << 15
            | (0 if b_k_major else 1) << 16 | (n >> 3) << 17 | (m >> 4) << 24)


def _ptr(buf: Any, idx: list[Any]) -> Any:
    from tilelang.layout import linearize

    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(str(buf.ty.dtype)), buf.data,
                            linearize(idx, list(buf.ty.shape)), 1, 1)


def _tmem_base(ctx: Any, region: Any) -> tuple[Any, Any]:
    """``(TMEM address of the region's first column, its column count)``."""
    slot, _ = slot_of(ctx.func, region.source)
    shape = [C.as_int(s) for s in region.source.ty.shape]
    col, stride = region.region[-1].min, shape[-1]
    for d in range(len(shape) - 3, -1, -1):
        col = col + region.region[d].min * stride
        stride *= shape[d]
    return tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)]), col


def lower_tcgen05_gemm(ctx: Any) -> Any:
    a, b, c, ta, tb, clear, bar, *extra = ctx.args
    ta, tb = bool(C.as_int(ta)), bool(C.as_int(tb))
    dtype = str(a.source.ty.dtype)
    if dtype not in FORMATS or str(b.source.ty.dtype) != dtype or str(c.source.ty.dtype) != "float32":
        raise ctx.error(f"lowers float16 / bfloat16 operands into a float32 TMEM accumulator; got {dtype} x "
                        f"{b.source.ty.dtype} -> {c.source.ty.dtype}")
    cext = [C.as_int(r.extent) for r in c.region]
    m, n = cext[-2], cext[-1]
    aext = [C.as_int(r.extent) for r in a.region]
    k = aext[-2] if ta else aext[-1]
    if m != 128 or None in (n, k) or n % 16 or k % 16:
        raise ctx.error(f"issues M=128 tcgen05.mma atoms over N and K multiples of 16; got M={m}, N={n}, K={k}")
    tiles = {}
    for name, op in (("A", a), ("B", b)):
        if C.scope_of(op.source) not in ("shared", "shared.dyn"):
            raise ctx.error(f"operand {name} must be a shared tile (the SS form), got {C.scope_of(op.source)}")
        tile = tile_layout(list(op.source.ty.shape), dtype_bytes(dtype))
        if tile is None:
            raise ctx.error(f"shared tile {op.source.name} cannot take a tcgen05 swizzled layout (16-bit rows of 32, "
                            "64 or a multiple of 128 bytes, rows a multiple of 8)")
        tiles[name] = tile
    atom_n = next(x for x in range(256, 15, -16) if n % x == 0)
    a_k_major, b_k_major = not ta, tb
    idesc = instruction_descriptor(128, atom_n, dtype, a_k_major, b_k_major)
    base, col0 = _tmem_base(ctx, c)
    a_mins, b_mins = [r.min for r in a.region], [r.min for r in b.region]

    def desc(op_mins: list[Any], buf: Any, tile: Any, k_major: bool, mn0: int, ks: int) -> Any:
        idx = list(op_mins)
        if k_major:
            idx[-2], idx[-1] = idx[-2] + mn0, idx[-1] + ks * 16
        else:
            idx[-2], idx[-1] = idx[-2] + ks * 16, idx[-1] + mn0
        _, lbo, sbo, _ = tile.descriptor(k_major, mn0, ks)
        return ext("tl_umma_desc_sw", _ptr(buf, idx), lbo, sbo, UMMA_SWIZZLE[tile.width], dtype="uint64")

    issue = [stmt("tl_fence_proxy_async_all"), stmt("tl_tcgen05_after_thread_sync")]
    for nb in range(n // atom_n):
        for ks in range(k // 16):
            accumulate: Any = tirx.IntImm("int32", 1)
            if ks == 0:
                accumulate = tirx.IntImm("int32", 1) - tirx.Cast("int32", clear)
            d_addr = base + tirx.Cast("uint32", col0 + nb * atom_n)
            issue.append(stmt("tl_tcgen05_mma_ss", d_addr, desc(a_mins, a.source, tiles["A"], a_k_major, 0, ks),
                              desc(b_mins, b.source, tiles["B"], b_k_major, nb * atom_n, ks),
                              tirx.IntImm("uint32", idesc), accumulate))
    if not (isinstance(bar, tirx.IntImm) or C.as_int(bar) is not None):
        issue.append(stmt("tl_tcgen05_commit", addr_of(bar)))
    first = C.as_int(extra[0]) if extra else 0
    leader = C.linear_thread(ctx.func) == first
    return Lowered(None, [tirx.IfThenElse(leader, seq(issue), None)])


def _leader_only(ctx: Any, stmts: list[Any], extra: list[Any]) -> Any:
    """`stmts` on the first thread of the calling scope (the thread that issued its tcgen05 operations)."""
    first = C.as_int(extra[0]) if extra else 0
    return Lowered(None, [tirx.IfThenElse(C.linear_thread(ctx.func) == first, seq(stmts), None)])


def lower_deallocate(ctx: Any) -> Any:
    (load,) = ctx.args
    slot, cols = slot_of(ctx.func, load.source)
    base = tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)])
    warp0 = tirx.floordiv(C.linear_thread(ctx.func), 32) == 0
    return Lowered(None, [stmt("tl_tcgen05_before_thread_sync"),
                          tirx.IfThenElse(warp0, stmt("tl_tmem_dealloc", base, cols), None)])


def lower_cp_warpx4(ctx: Any) -> Any:
    ptr, load, col, _chunks, *extra = ctx.args
    slot, _ = slot_of(ctx.func, load.source)
    base = tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)])
    from tilelang_cuda.tileops.dialect import ptr_add

    steps = [stmt("tl_tcgen05_cp_warpx4", ptr_add(ptr, 128 * i), base + tirx.Cast("uint32", col + 4 * i))
             for i in range(ctx.int_arg(3))]
    first = C.as_int(extra[0]) if extra else 0
    return Lowered(None, [tirx.IfThenElse(C.linear_thread(ctx.func) == first, seq(steps), None)])


def lower_sf_transpose(ctx: Any) -> Any:
    from tilelang_cuda.tileops.dialect import ptr_add

    ptr = ctx.args[0]
    return Lowered(None, [stmt("tl_tcgen05_sf_warp_transpose", ptr_add(ptr, 128 * i)) for i in range(ctx.int_arg(1))])


LOWER: dict[str, Any] = {
    "tl.tcgen05_before_thread_sync": (TCGEN05, lambda ctx: ext("tl_tcgen05_before_thread_sync")),
    "tl.tcgen05_after_thread_sync": (TCGEN05, lambda ctx: ext("tl_tcgen05_after_thread_sync")),
    "tl.tcgen05_mma_arrive": (TCGEN05, lambda ctx: _leader_only(ctx, [stmt("tl_tcgen05_commit", addr_of(ctx.args[0]))],
                                                                 ctx.args[1:])),
    "tl.tcgen05_gemm": (TCGEN05, lower_tcgen05_gemm),
    "tl.deallocate_tmem": (TCGEN05, lower_deallocate),
    "tl.tcgen05_cp_warpx4": (TCGEN05, lower_cp_warpx4),
    "tl.tcgen05_sf_warp_transpose": (TCGEN05, lower_sf_transpose),
}
