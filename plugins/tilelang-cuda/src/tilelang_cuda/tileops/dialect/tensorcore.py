"""Lowerings of the dialect's tensor-core constructs: tcgen05 fences and commits, TMEM deallocation and scale-factor
copies, UMMA descriptors and ``T.tcgen05_gemm`` (sm_100a).

``T.tcgen05_gemm(A, B, C_tmem, mbar=...)``: one thread of the calling scope (its first, from
`tilelang_cuda.passes.dialect_scopes`) issues a ``tcgen05.mma.cta_group::1.kind::f16`` per N atom and k16 step:
A (M = 128 rows) and B read from their shared tiles through UMMA descriptors on the hardware-swizzled layouts
(`tilelang_cuda.wgmma_layout`; the swizzle pass stores the tiles that way, TMA boxes included), the fp32
accumulator at the TMEM tile's columns (`tilelang_cuda.passes.tensor_memory`); then ``tcgen05.commit`` arrives on
`mbar`. The first k step of a ``clear_accum`` GEMM overwrites the accumulator. No wait: the consumer waits on
`mbar` and reads the accumulator with ``T.copy``.

A 16-bit TMEM tile as A (``P_tmem`` of the reference's Blackwell flash attention) gives the TS form,
``tcgen05.mma ... [d], [a], b_desc``: row i of A on datapath i, each k16 step 8 columns further.

``use_2cta=True`` (a cluster of (2, 1, 1) or (1, 2, 1)): the even CTA's thread issues one M = 256
``tcgen05.mma.cta_group::2`` over C's N columns (each CTA holds its 128 rows of A and C and N / 2 columns of B
at the same shared addresses) and commits with the multicast ``tcgen05.commit.cta_group::2`` to both CTAs; the
kernel's TMEM is then allocated per pair (`tilelang_cuda.passes.tensor_memory`).

``T.tcgen05_gemm_blockscaled``: the same issue with ``kind::mxf8f6f4.block_scale`` on FP8 tiles (K32 steps), the
E8M0 scale factors at the SFA / SFB TMEM tiles; each step's instruction descriptor carries the byte of the
packed scale-factor words it uses, ``((k_start + 32 i) // granularity) % 4`` (A at bits 29-30, B at 4-5).

The raw ``T.ptx_tcgen05_mma_ss`` / ``_ts`` / ``_blockscaled_ss`` become one instruction on an elected lane of the
calling warp: descriptors advanced by byte offsets / 16, TMEM operands at their tile's base plus a column offset.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.sdk import Lowered, dtype_bytes
from tilelang.layout import linearize
from tilelang.transform import utils as C
from tilelang_cuda.passes.tensor_memory import TMEM_SCOPE, per_column, slot_of
from tilelang_cuda.tileops.dialect.emit import LOWER, ext, lowering, seq, stmt
from tilelang_cuda.tileops.dialect.pointers import access_ptr, addr_of, is_call, ptr_add, unsynced
from tilelang_cuda.tileops.dialect.requirements import BASE, TCGEN05
from tilelang_cuda.wgmma_layout import tile_layout

UMMA_SWIZZLE = {128: 2, 64: 4, 32: 6}  # SM100 descriptor layout field of a swizzle width in bytes
FORMATS = {"float16": 0, "bfloat16": 1}
# kind::mxf8f6f4 A / B formats (instruction descriptor bits 7-9 / 10-12): E4M3 0, E5M2 1, E2M1 5. An FP4 operand
# of this kind is read from shared memory unpacked (each 16 values: 8 packed bytes, then 8 bytes of padding, as
# the 16U4_ALIGN16B TMA load writes them), so its tile is ``T.float4_e2m1_unpacked``: one byte per value to the
# descriptors, like FP8.
MX_FORMATS = {"float8_e4m3fn": 0, "float8_e4m3": 0, "float8_e5m2": 1, "custom[float4_e2m1_unpacked]": 5,
              "custom[float4_e2m1_unpacked]8": 5}
# the kinds of the raw ``T.ptx_tcgen05_mma_*`` instructions and the ``kind_dtype`` names that select them
RAW_KINDS = {"f16": ("float16", "bfloat16"), "tf32": ("tf32", "float32"), "i8": ("int8", "uint8"),
             "f8f6f4": ("float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float6_e2m3fn", "float6_e3m2fn",
                        "float4_e2m1fn")}
# the argument index of the use_2cta flag of each construct that has one
TWO_CTA_FLAG = {"tl.tcgen05_gemm": 7, "tl.tcgen05_gemm_blockscaled": 12, "tl.tcgen05_cp_warpx4": 4,
                "tl.ptx_tcgen05_mma_ss": 14, "tl.ptx_tcgen05_mma_ts": 13, "tl.ptx_tcgen05_mma_blockscaled_ss": 15}


def instruction_descriptor(m: int, n: int, ab: str, a_k_major: bool, b_k_major: bool) -> int:
    """The 32-bit ``kind::f16`` instruction descriptor (PTX "Instruction descriptor"): f32 D (bits 4-5 = 1), A and B
    formats (7-9, 10-12), MN-major A / B (15, 16), N >> 3 (17-22), M >> 4 (24-28)."""
    return (1 << 4 | FORMATS[ab] << 7 | FORMATS[ab] << 10 | (0 if a_k_major else 1) << 15
            | (0 if b_k_major else 1) << 16 | (n >> 3) << 17 | (m >> 4) << 24)


def blockscaled_descriptor(m: int, n: int, a: str, b: str, a_k_major: bool, b_k_major: bool) -> int:
    """The 32-bit ``kind::mxf8f6f4.block_scale`` instruction descriptor with scale-factor ids 0 (PTX "Instruction
    descriptor" for block scaling): A and B formats (7-9, 10-12), MN-major A / B (15, 16), N >> 3 (17-22), E8M0
    scale factors (23), M >> 4 (24-28); the B / A scale-factor ids go to bits 4-5 / 29-30 per K step."""
    return (MX_FORMATS[a] << 7 | MX_FORMATS[b] << 10 | (0 if a_k_major else 1) << 15 | (0 if b_k_major else 1) << 16
            | (n >> 3) << 17 | 1 << 23 | (m >> 4) << 24)


def _ptr(buf: Any, idx: list[Any]) -> Any:
    return access_ptr(str(buf.ty.dtype), buf.data, linearize(idx, list(buf.ty.shape)), 1, 1)


def _slot_base(ctx: Any, tile: Any) -> tuple[Any, Any]:
    """``(TMEM address of `tile`'s first column, its column count)`` from the slot its allocation wrote."""
    slot, cols = slot_of(ctx.func, tile)
    return tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)]), cols


def _tmem_base(ctx: Any, region: Any) -> tuple[Any, Any]:
    """``(TMEM address of the tile, the TMEM column of the region's first element)``."""
    base, _ = _slot_base(ctx, region.source)
    shape = [C.as_int(s) for s in region.source.ty.shape]
    col, stride = region.region[-1].min, shape[-1]
    for d in range(len(shape) - 3, -1, -1):
        col = col + region.region[d].min * stride
        stride *= shape[d]
    return base, col


def cluster_dims(func: Any) -> tuple[int, ...] | None:
    """The kernel's cluster shape (``T.ClusterKernel``), None for a kernel launched without clusters."""
    def is_dims(c: Any) -> bool:
        if is_call(c, "tl.cluster_dims"):
            return True
        return (is_call(c, "tirx.call_extern") and c.args
                and isinstance(c.args[0], tvm.ir.StringImm) and c.args[0].value == "tl_cluster_dims_marker")

    for c in C.collect(func.body, tvm.ir.Call, is_dims):
        dims = c.args[1:] if c.op.name == "tirx.call_extern" else c.args
        return tuple(int(C.as_int(d) or 1) for d in dims)
    return None


def uses_2cta(func: Any) -> bool:
    """Whether the kernel issues MMAs of a CTA pair (``use_2cta=True``): its TMEM is then allocated per pair."""
    def two(c: Any) -> bool:
        if not isinstance(c.op, tvm.ir.Op) or c.op.name not in TWO_CTA_FLAG:
            return False
        i = TWO_CTA_FLAG[c.op.name]
        return len(c.args) > i and bool(C.as_int(c.args[i]))

    return bool(C.collect(func.body, tvm.ir.Call, two))


def _check_pair(ctx: Any, what: str) -> None:
    dims = cluster_dims(ctx.func)
    if dims not in ((2, 1, 1), (1, 2, 1)):
        raise ctx.error(f"{what}(use_2cta=True) requires cluster_dims (2,1,1) or (1,2,1) (T.ClusterKernel(..., "
                        f"cluster_dims=2)); a one-CTA fallback is not valid for rank-sharded operands; got "
                        f"{dims or 'no cluster'}")


def is_rank0() -> Any:
    """Whether this CTA is rank 0 of its cluster."""
    return ext("tl_cluster_ctarank", dtype="int32") == 0


def _issue(ctx: Any, a: Any, b: Any, c: Any, ta: bool, tb: bool, clear: Any, pair: bool, kind: str,
           block_scale: tuple[Any, ...] | None = None) -> list[Any]:
    """The tcgen05.mma statements of ``C (+)= op(A) @ op(B)`` (SS form, or TS with A a 16-bit TMEM tile): one per
    N atom and K step."""
    what = "T.tcgen05_gemm_blockscaled" if block_scale is not None else "T.tcgen05_gemm"
    dtype = str(a.source.ty.dtype)
    elem = dtype_bytes(dtype)
    atom_k = 32 // elem
    cext = [C.as_int(r.extent) for r in c.region]
    m, n = cext[-2], cext[-1]
    aext = [C.as_int(r.extent) for r in a.region]
    k = aext[-2] if ta else aext[-1]
    bext = [C.as_int(r.extent) for r in b.region]
    b_n = bext[-2] if tb else bext[-1]
    if m != 128 or None in (n, k) or n % 16 or k % atom_k:
        raise ctx.error(f"issues M=128 tcgen05.mma atoms (per CTA) over N a multiple of 16 and K of {atom_k}; got "
                        f"M={m}, N={n}, K={k}")
    if pair:
        _check_pair(ctx, what)
        if n > 256 or b_n is None or 2 * b_n != n:
            raise ctx.error(f"a CTA pair issues one M=256 instruction over C's N (at most 256), each CTA holding "
                            f"N/2 columns of B; got C's N={n} and B's N={b_n}")
    tiles = {}
    ts = C.scope_of(a.source) == TMEM_SCOPE  # the TS form: A from tensor memory
    if ts and (kind != "f16" or pair or ta or per_column(a.source) != 2):
        raise ctx.error("reads A from tensor memory (the TS form) for a one-CTA kind::f16 MMA with a K-major "
                        f"float16 / bfloat16 A (transpose_A=False); got {a.source.ty.dtype} A"
                        + (", use_2cta=True" if pair else "") + (", transpose_A=True" if ta else ""))
    for name, op in (("A", a), ("B", b)):
        if name == "A" and ts:
            continue
        if C.scope_of(op.source) not in ("shared", "shared.dyn"):
            raise ctx.error(f"operand {name} must be a shared tile (the SS form), got {C.scope_of(op.source)}")
        tile = tile_layout(list(op.source.ty.shape), elem, elem_sizes=(1, 2))
        if tile is None:
            raise ctx.error(f"shared tile {op.source.name} cannot take a tcgen05 swizzled layout (rows of 32, 64 or "
                            "a multiple of 128 bytes, rows a multiple of 8)")
        tiles[name] = tile
    atom_n = n if pair else next(x for x in range(256, 15, -16) if n % x == 0)
    a_k_major, b_k_major = not ta, tb
    atom_m = 256 if pair else 128
    if block_scale is None:
        idesc: Any = tirx.IntImm("uint32", instruction_descriptor(atom_m, atom_n, dtype, a_k_major, b_k_major))
    else:
        base_desc = blockscaled_descriptor(atom_m, atom_n, dtype, str(b.source.ty.dtype), a_k_major, b_k_major)
    base, col0 = _tmem_base(ctx, c)
    if ts:  # A's row i on datapath i, K packed two elements a column
        a_base, a_col0 = _tmem_base(ctx, a)
        a_col0 = tirx.floordiv(a_col0, 2)
    a_mins, b_mins = [r.min for r in a.region], [r.min for r in b.region]
    steps = atom_k // 16  # the tile's descriptor steps are 16 elements

    def desc(op_mins: list[Any], buf: Any, tile: Any, k_major: bool, mn0: int, ks: int) -> Any:
        idx = list(op_mins)
        if k_major:
            idx[-2], idx[-1] = idx[-2] + mn0, idx[-1] + ks * atom_k
        else:
            idx[-2], idx[-1] = idx[-2] + ks * atom_k, idx[-1] + mn0
        _, lbo, sbo, _ = tile.descriptor(k_major, mn0, ks * steps)
        return ext("tl_umma_desc_sw", _ptr(buf, idx), lbo, sbo, UMMA_SWIZZLE[tile.width], dtype="uint64")

    group = 2 if pair else 1
    issue = []
    for nb in range(n // atom_n):
        for ks in range(k // atom_k):
            accumulate: Any = tirx.IntImm("int32", 1)
            if ks == 0:
                accumulate = tirx.IntImm("int32", 1) - tirx.Cast("int32", clear)
            d_addr = base + tirx.Cast("uint32", col0 + nb * atom_n)
            b_desc = desc(b_mins, b.source, tiles["B"], b_k_major, nb * atom_n, ks)
            if ts:
                a_addr = a_base + tirx.Cast("uint32", a_col0 + ks * atom_k // 2)
                issue.append(stmt("tl_tcgen05_mma_ts", d_addr, a_addr, b_desc, idesc, accumulate))
                continue
            a_desc = desc(a_mins, a.source, tiles["A"], a_k_major, 0, ks)
            if block_scale is None:
                helper = "tl_tcgen05_mma_ss" if (kind, group) == ("f16", 1) else f"tl_tcgen05_mma_ss_{kind}_cg{group}"
                issue.append(stmt(helper, d_addr, a_desc, b_desc, idesc, accumulate))
                continue
            sfa, sfb, k_start, ga, gb = block_scale
            k_at = k_start + ks * atom_k
            ida = tirx.Cast("uint32", tirx.floormod(tirx.floordiv(k_at, ga), 4))
            idb = tirx.Cast("uint32", tirx.floormod(tirx.floordiv(k_at, gb), 4))
            step_desc = (tirx.IntImm("uint32", base_desc) | tirx.shift_left(ida, tirx.IntImm("uint32", 29))
                         | tirx.shift_left(idb, tirx.IntImm("uint32", 4)))
            issue.append(stmt(f"tl_tcgen05_mma_bs_mxf8f6f4_cg{group}", d_addr, a_desc, b_desc, step_desc, accumulate,
                              sfa, sfb))
    return issue


def _commit(bar: Any, pair: bool) -> list[Any]:
    if isinstance(bar, tirx.IntImm) or C.as_int(bar) is not None:
        return []
    return [stmt("tl_tcgen05_commit_2cta" if pair else "tl_tcgen05_commit", addr_of(bar))]


def _issuer(ctx: Any, extra: list[Any], pair: bool) -> Any:
    """The issuing thread: the first of the calling scope, in the even CTA of a pair."""
    first = C.as_int(extra[0]) if extra else 0
    cond = C.linear_thread(ctx.func) == first
    return tirx.And(is_rank0(), cond) if pair else cond


def lower_tcgen05_gemm(ctx: Any) -> Any:
    a, b, c, ta, tb, clear, bar, pair, *extra = ctx.args
    ta, tb, pair = bool(C.as_int(ta)), bool(C.as_int(tb)), bool(C.as_int(pair))
    dtype = str(a.source.ty.dtype)
    if dtype not in FORMATS or str(b.source.ty.dtype) != dtype or str(c.source.ty.dtype) != "float32":
        raise ctx.error(f"lowers float16 / bfloat16 operands into a float32 TMEM accumulator; got {dtype} x "
                        f"{b.source.ty.dtype} -> {c.source.ty.dtype}")
    issue = [stmt("tl_fence_proxy_async_all"), stmt("tl_tcgen05_after_thread_sync"),
             *_issue(ctx, a, b, c, ta, tb, clear, pair, "f16"), *_commit(bar, pair)]
    return Lowered(None, [tirx.IfThenElse(_issuer(ctx, extra, pair), seq(issue), None)])


def lower_tcgen05_gemm_blockscaled(ctx: Any) -> Any:
    a, b, c, sfa, sfb, ta, tb, clear, bar, k_start, ga, gb, pair, *extra = ctx.args
    ta, tb, pair = bool(C.as_int(ta)), bool(C.as_int(tb)), bool(C.as_int(pair))
    ab = (str(a.source.ty.dtype), str(b.source.ty.dtype))
    if "float4_e2m1fn" in ab:
        raise ctx.error(f"kind::mxf8f6f4 reads an FP4 operand from shared memory unpacked (16 values per 16 bytes); "
                        f"allocate its tile as T.float4_e2m1_unpacked and load it with T.tma_copy from the packed "
                        f"float4_e2m1fn tensor; got {ab[0]} x {ab[1]}")
    if any(t not in MX_FORMATS for t in ab) or str(c.source.ty.dtype) != "float32":
        raise ctx.error(f"lowers FP8 (e4m3 / e5m2) operands (or unpacked FP4, T.float4_e2m1_unpacked) into a float32 "
                        f"TMEM accumulator (kind::mxf8f6f4); got {ab[0]} x {ab[1]} -> {c.source.ty.dtype}")
    sf_addr = [_slot_base(ctx, load.source)[0] for load in (sfa, sfb)]
    block_scale = (*sf_addr, tirx.Cast("int32", k_start), ga, gb)
    issue = [stmt("tl_fence_proxy_async_all"), stmt("tl_tcgen05_after_thread_sync"),
             *_issue(ctx, a, b, c, ta, tb, clear, pair, "mxf8f6f4", block_scale), *_commit(bar, pair)]
    return Lowered(None, [tirx.IfThenElse(_issuer(ctx, extra, pair), seq(issue), None)])


def lower_mma_arrive(ctx: Any) -> Any:
    bar, pair, *extra = ctx.args
    pair = bool(C.as_int(pair))
    return Lowered(None, [tirx.IfThenElse(_issuer(ctx, extra, False), seq(_commit(bar, pair)), None)])


def lower_deallocate(ctx: Any) -> Any:
    (load,) = ctx.args
    base, cols = _slot_base(ctx, load.source)
    warp0 = tirx.floordiv(C.linear_thread(ctx.func), 32) == 0
    if uses_2cta(ctx.func):  # both CTAs of the pair release the columns together
        return Lowered(None, [stmt("tl_tcgen05_before_thread_sync"), stmt("tl_cluster_sync"),
                              tirx.IfThenElse(warp0, stmt("tl_tmem_dealloc_2cta", base, cols), None)])
    return Lowered(None, [stmt("tl_tcgen05_before_thread_sync"),
                          tirx.IfThenElse(warp0, stmt("tl_tmem_dealloc", base, cols), None)])


def lower_cp_warpx4(ctx: Any) -> Any:
    ptr, load, col, _chunks, pair, *extra = ctx.args
    pair = bool(C.as_int(pair))
    if pair:
        _check_pair(ctx, "T.tcgen05_cp_warpx4")
    base, _ = _slot_base(ctx, load.source)
    helper = "tl_tcgen05_cp_warpx4_2cta" if pair else "tl_tcgen05_cp_warpx4"
    steps = [stmt(helper, unsynced(ptr_add(ptr, 128 * i)), base + tirx.Cast("uint32", col + 4 * i))
             for i in range(ctx.int_arg(3))]
    return Lowered(None, [tirx.IfThenElse(_issuer(ctx, extra, pair), seq(steps), None)])


def lower_sf_transpose(ctx: Any) -> Any:
    ptr = ctx.args[0]
    return Lowered(None, [stmt("tl_tcgen05_sf_warp_transpose", unsynced(ptr_add(ptr, 128 * i)))
                          for i in range(ctx.int_arg(1))])


def _kind(ctx: Any, kind_dtype: Any) -> str:
    """The tcgen05.mma kind of a raw instruction's `kind_dtype` (the reference's selector)."""
    name = str(kind_dtype.value if isinstance(kind_dtype, tvm.ir.StringImm) else kind_dtype)
    for kind, names in RAW_KINDS.items():
        if name in names:
            return kind
    raise ctx.error(f"kind_dtype {name!r} names no tcgen05.mma kind; use one of "
                    f"{', '.join(n for names in RAW_KINDS.values() for n in names)}")


def _tmem_address(ctx: Any, load: Any, offset: Any) -> Any:
    return _slot_base(ctx, load.source)[0] + tirx.Cast("uint32", offset)


def _advanced(desc: Any, byte_offset: Any) -> Any:
    """A descriptor whose start address moved by `byte_offset` bytes (the field counts 16-byte units)."""
    if C.is_const(byte_offset, 0):
        return desc
    return desc + tirx.Cast("uint64", tirx.shift_right(byte_offset, tirx.IntImm(str(byte_offset.ty.dtype), 4)))


def _elected(stmts: list[Any]) -> Any:
    """`stmts` on one elected lane of the calling warp (the raw MMAs are issued by a single thread)."""
    return Lowered(None, [tirx.IfThenElse(ext("tl_elect_one", dtype="bool"), seq(stmts), None)])


def lower_raw_mma_ss(ctx: Any) -> Any:
    kind_dtype, da, a_off, db, b_off, c, c_off, idesc, scale_out, *masks_flags = ctx.args
    *masks, ws, pair = masks_flags
    kind, ws, pair = _kind(ctx, kind_dtype), bool(C.as_int(ws)), bool(C.as_int(pair))
    args = [_tmem_address(ctx, c, c_off), _advanced(da, a_off), _advanced(db, b_off), tirx.Cast("uint32", idesc),
            tirx.Cast("int32", scale_out)]
    if ws:
        return _elected([stmt(f"tl_tcgen05_mma_ws_ss_{kind}", *args)])
    if pair:
        return _elected([stmt(f"tl_tcgen05_mma_ss_{kind}_cg2", *args)])
    return _elected([stmt(f"tl_tcgen05_mma_ss_{kind}_masked", *args, *[tirx.Cast("uint32", m) for m in masks])])


def lower_raw_mma_ts(ctx: Any) -> Any:
    kind_dtype, a, a_off, db, b_off, c, c_off, idesc, scale_out, *masks_flag = ctx.args
    *masks, pair = masks_flag
    kind, pair = _kind(ctx, kind_dtype), bool(C.as_int(pair))
    args = [_tmem_address(ctx, c, c_off), _tmem_address(ctx, a, a_off), _advanced(db, b_off),
            tirx.Cast("uint32", idesc), tirx.Cast("int32", scale_out)]
    if pair:
        return _elected([stmt(f"tl_tcgen05_mma_ts_{kind}_cg2", *args)])
    return _elected([stmt(f"tl_tcgen05_mma_ts_{kind}_masked", *args, *[tirx.Cast("uint32", m) for m in masks])])


def lower_raw_mma_blockscaled(ctx: Any) -> Any:
    kind_dtype, da, a_off, db, b_off, c, c_off, idesc, scale_out, sfa, sfa_off, sfb, sfb_off, _r0, _r1, pair = \
        ctx.args
    name = str(kind_dtype.value if isinstance(kind_dtype, tvm.ir.StringImm) else kind_dtype)
    if name not in MX_FORMATS and name not in ("float8_e4m3", "float8_e5m2"):
        raise ctx.error(f"block-scaled tcgen05.mma (kind::mxf8f6f4) takes FP8 e4m3 / e5m2 operands, got {name!r}")
    group = 2 if C.as_int(pair) else 1
    return _elected([stmt(f"tl_tcgen05_mma_bs_mxf8f6f4_cg{group}", _tmem_address(ctx, c, c_off),
                          _advanced(da, a_off), _advanced(db, b_off), tirx.Cast("uint32", idesc),
                          tirx.Cast("int32", scale_out), _tmem_address(ctx, sfa, sfa_off),
                          _tmem_address(ctx, sfb, sfb_off))])


@lowering("initialize_tcgen05_descriptor", TCGEN05)
def _init_umma_desc(ctx: Any) -> Any:
    load, ptr, lbo, sbo, swizzle, *rest = ctx.args  # offsets in 16-byte units (the descriptor fields)
    base, absolute = (C.as_int(x) for x in rest) if rest else (0, 0)
    if base or absolute:  # the matrix base offset (bits 49-51) and the absolute leading-address mode (bit 52)
        desc = ext("tl_umma_desc_based", ptr, lbo * 16, sbo * 16, swizzle, base, absolute, dtype="uint64")
    else:
        desc = ext("tl_umma_desc", ptr, lbo * 16, sbo * 16, swizzle, dtype="uint64")
    return Lowered(None, [tirx.BufferStore(load.source, desc, list(load.indices))])


@lowering("tcgen05_gemm_sp", BASE)
def _tcgen05_gemm_sp(ctx: Any) -> Any:
    arch = str(ctx.target.attrs.get("arch", "")) if hasattr(ctx.target, "attrs") else ""
    raise ctx.error("requires Blackwell TCGEN5MMA sparse lowering, but sparse TCGEN5MMA lowering is not yet "
                    f"available (as in the reference TileLang 0.1.15). Got target=cuda -arch={arch}",
                    "use T.gemm_sp (mma.sp) or T.wgmma_gemm_sp (sm_90a)")


LOWER.update({
    "tl.ptx_tcgen05_mma_ss": (TCGEN05, lower_raw_mma_ss),
    "tl.ptx_tcgen05_mma_ts": (TCGEN05, lower_raw_mma_ts),
    "tl.ptx_tcgen05_mma_blockscaled_ss": (TCGEN05, lower_raw_mma_blockscaled),
    "tl.tcgen05_before_thread_sync": (TCGEN05, lambda ctx: ext("tl_tcgen05_before_thread_sync")),
    "tl.tcgen05_after_thread_sync": (TCGEN05, lambda ctx: ext("tl_tcgen05_after_thread_sync")),
    "tl.tcgen05_mma_arrive": (TCGEN05, lower_mma_arrive),
    "tl.tcgen05_gemm": (TCGEN05, lower_tcgen05_gemm),
    "tl.tcgen05_gemm_blockscaled": (TCGEN05, lower_tcgen05_gemm_blockscaled),
    "tl.deallocate_tmem": (TCGEN05, lower_deallocate),
    "tl.tcgen05_cp_warpx4": (TCGEN05, lower_cp_warpx4),
    "tl.tcgen05_sf_warp_transpose": (TCGEN05, lower_sf_transpose),
})
