"""Lowerings of the dialect's TMA constructs: ``T.tma_copy`` (loads completing on a user mbarrier, stores in bulk
groups, with ``T.tma_store_arrive`` / ``T.tma_store_wait``), the raw ``T.tma_load`` on a ``T.create_tma_descriptor``
map, the sm_100a row gather / scatter, and ``T.copy_cluster``.

The tensor map of a copy is named in the device code by a string literal ``"tl_tmap:<tensor>:<box>:<swizzle>"``
(`map_token`); `tilelang_cuda.tma.rewrite_source` turns each into a ``__grid_constant__`` kernel parameter and
the launch encodes it from the tensor argument (`tilelang_cuda.tma.tensor_maps_of`). A map whose
``CUtensorMapDataType`` does not follow from the tensor's dtype carries it in a fifth field ``:t<type>``: the
packed-FP4 -> ``T.float4_e2m1_unpacked`` load (`UNPACKED_FP4`) is ``:t14``, ``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B``.

Issuing threads: one per leader scope. `tilelang_cuda.passes.dialect_scopes` appends to each call the first
thread and the size of the thread range the call runs in (from the enclosing ``T.ws`` / ``if tx < ...``); a
copy is issued by the threads ``(tid - first) % leader_scope_threads == 0`` (default: the range's first thread).
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.sdk import Lowered, dtype_bytes
from tilelang.layout import linearize
from tilelang.transform import utils as C
from tilelang_cuda.tileops.dialect.emit import LOWER, ext, lowering, seq, simple, stmt
from tilelang_cuda.tileops.dialect.pointers import access_ptr, addr_of, is_call
from tilelang_cuda.tileops.dialect.requirements import GATHER4, TCGEN05, TMA, missing
from tilelang_cuda.tileops.dialect.tensorcore import cluster_dims, is_rank0

MAX_BOX = 256
MAX_RANK = 5
# the swizzle field of a map token whose box fills column blocks of a tile `passes.swizzle_shared_operands` must
# lay out for wgmma (it rewrites the token to the tile's swizzle, or refuses the copy if the tile stays linear)
COLUMN_BLOCKS = 9


# CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B (cuda.h): 16 packed 4-bit values of global memory land as 8 bytes followed
# by an 8-byte gap in shared memory -- the "unpacked" FP4 operand layout of tcgen05.mma kind::f8f6f4 / mxf8f6f4.
# The map's dims count 4-bit values, its innermost box is exactly 128 of them, and the transaction bytes an
# mbarrier expects are the packed payload read from global memory (half a byte per value).
TMAP_16U4_ALIGN16B = 14
UNPACKED_FP4 = ("float4_e2m1fn", "custom[float4_e2m1_unpacked]")  # (global, shared) dtypes of that load
UNPACKED_FP4_BOX = 128


def map_token(tensor: str, box: list[int], swizzle: int = 0, data_type: int | None = None) -> Any:
    """The string literal a helper call takes in place of the tensor map of `tensor` with `box` (outermost first);
    `data_type`: a ``CUtensorMapDataType`` the launch must use instead of the one of the tensor's dtype."""
    tail = "" if data_type is None else f":t{data_type}"
    return tvm.ir.StringImm(f"tl_tmap:{tensor}:{'x'.join(str(b) for b in box)}:{swizzle}{tail}")


def parse_token(token: str) -> tuple[str, list[int], int, int | None]:
    """``(tensor, box, swizzle, data type or None)`` of a `map_token` literal."""
    fields = str(token).split(":")
    if len(fields) not in (4, 5) or fields[0] != "tl_tmap" or (len(fields) == 5 and not fields[4].startswith("t")):
        raise ValueError(f"not a tensor-map token: {token!r}")
    data_type = int(fields[4][1:]) if len(fields) == 5 else None
    return fields[1], [int(b) for b in fields[2].split("x")], int(fields[3]), data_type


def is_unpacked_fp4(gdtype: str, sdtype: str) -> bool:
    """Whether a copy between a global tensor of `gdtype` and a shared tile of `sdtype` is the packed-FP4 ->
    unpacked-FP4 TMA load (`TMAP_16U4_ALIGN16B`)."""
    return str(gdtype) == UNPACKED_FP4[0] and str(sdtype).removesuffix("8") == UNPACKED_FP4[1]


def tma_data_type(g: Any, s: Any) -> int | None:
    """The ``CUtensorMapDataType`` a copy between global region `g` and shared region `s` needs beyond the one of
    the global tensor's dtype (None: that one)."""
    return TMAP_16U4_ALIGN16B if is_unpacked_fp4(str(g.source.ty.dtype), str(s.source.ty.dtype)) else None


def payload_bytes(g: Any, s: Any, count: int) -> int:
    """The bytes a TMA load of `count` elements from global region `g` into shared region `s` completes on its
    mbarrier: the global payload (half a byte per value for packed FP4 into an unpacked tile)."""
    if is_unpacked_fp4(str(g.source.ty.dtype), str(s.source.ty.dtype)):
        return count // 2
    return count * dtype_bytes(str(g.source.ty.dtype))


def _leader(ctx: Any, leader_threads: int, extra: list[Any]) -> Any:
    """The condition of the issuing threads (see the module docstring)."""
    first = C.as_int(extra[0]) if extra else 0
    size = C.as_int(extra[1]) if len(extra) > 1 else None
    step = leader_threads or size or 0
    tid = ctx.linear_thread()
    if not step:
        return tid == first
    return tirx.floormod(tid - first, step) == 0


def _static(values: list[Any], what: str, ctx: Any) -> list[int]:
    out = [C.as_int(v) for v in values]
    if None in out:
        raise ctx.error(f"{what} must be static, got {values}")
    return out  # type: ignore[return-value]


def _tile_swizzle(ctx: Any, sbuf: Any) -> int:
    """The TMA swizzle (0 none, 1 32B, 2 64B, 3 128B: the ``CUtensorMapSwizzle`` values) of shared tile `sbuf`:
    the bank-swizzled layout ``T.annotate_layout`` gave it, else none. The tile is then only accessed through
    addresses (TMA, wgmma / tcgen05 descriptors), so core keeps its storage as is and the copy and the MMA agree
    on the hardware swizzle. A swizzled layout other than the canonical bank swizzles is refused."""
    from tilelang.backend.sdk import LAYOUT_ANN, rebuild_layout
    from tilelang.layout import cute
    from tilelang.layout import swizzle as sw

    alloc = next((a for a in C.allocations(ctx.func.body) if a.buffer.same_as(sbuf)), None)
    value = None if alloc is None else alloc.annotations.get(LAYOUT_ANN)
    if value is None:
        return 0
    layout = rebuild_layout(sbuf, value)
    composed = cute.ComposedLayout.from_tilelang(layout)
    bits = 8 * dtype_bytes(str(sbuf.ty.dtype))
    mode = None if composed is None else composed.recast(bits, 8).swizzle.to_swizzle_mode()
    if mode is not None and mode.is_none():
        return 0
    makers = {3: sw.make_full_bank_swizzled_layout, 2: sw.make_half_bank_swizzled_layout,
              1: sw.make_quarter_bank_swizzled_layout}
    if mode is not None and mode.value in makers:
        canonical = cute.ComposedLayout.from_tilelang(makers[mode.value](sbuf))
        if canonical is not None and tvm.ir.structural_equal(canonical, composed):
            return int(mode.value)
    raise ctx.error(f"TMA writes shared tile {sbuf.name} only row-major or in a bank-swizzled layout "
                    "(T.annotate_layout with make_full/half/quarter_bank_swizzled_layout); its layout is neither")


def _plan(ctx: Any, g: Any, s: Any, _is_store: bool = False) -> list[tuple[list[int], int, Any, list[Any]]]:
    """The boxes of a copy between global region `g` and shared region `s` (whose box must be whole trailing
    modes of its tile, or whole column blocks of a swizzled one, `_column_blocks`): ``[(box, swizzle, shared
    pointer, coordinates innermost first)]`` -- one box, or one per column block of a bank-swizzled tile (TMA
    swizzles rows of at most the swizzle's width)."""
    gbuf, sbuf = g.source, s.source
    unpack = is_unpacked_fp4(str(gbuf.ty.dtype), str(sbuf.ty.dtype))
    if unpack and _is_store:
        raise ctx.error(f"TMA unpacks packed FP4 ({gbuf.ty.dtype}) into a {sbuf.ty.dtype} tile only on loads; the "
                        f"store {sbuf.name} -> {gbuf.name} has no TMA form (copy a packed float4_e2m1fn tile)")
    if str(gbuf.ty.dtype) != str(sbuf.ty.dtype) and not unpack:
        hint = (f"; the one converting copy is a load of packed {UNPACKED_FP4[0]} into a T.float4_e2m1_unpacked tile"
                if "float4_e2m1" in str(gbuf.ty.dtype) + str(sbuf.ty.dtype) else "")
        raise ctx.error(f"copies between {gbuf.ty.dtype} and {sbuf.ty.dtype}; TMA does not convert{hint}")
    rank = len(gbuf.ty.shape)
    if not 1 <= rank <= MAX_RANK:
        raise ctx.error(f"TMA tensors have 1 to {MAX_RANK} dims, {gbuf.name} has {rank}")
    box = _static([r.extent for r in g.region], "the TMA box", ctx)
    # rows wider than a box stay whole here: a tile wgmma reads through swizzled descriptors is split into column
    # blocks by `passes.swizzle_shared_operands`, which refuses a box still too wide after it (`check_boxes`)
    if not all(1 <= b <= MAX_BOX for b in box[:-1]) or box[-1] < 1:
        raise ctx.error(f"TMA box {box} has a dim outside 1..{MAX_BOX}")
    elem = dtype_bytes(str(sbuf.ty.dtype))  # bytes per element in shared memory (an unpacked FP4 value: one)
    if (box[-1] * elem) % 16:
        raise ctx.error(f"the TMA box's rows are {box[-1] * elem} bytes; TMA needs a multiple of 16")
    if unpack:
        if missing(ctx.target, TCGEN05) is not None:
            raise ctx.error("the unpacking FP4 TMA load (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B, for tcgen05 "
                            "block-scaled MMAs) needs an sm_100a-family target")
        gshape = [C.as_int(d) for d in gbuf.ty.shape]
        if box[-1] != UNPACKED_FP4_BOX:
            raise ctx.error(f"an unpacking FP4 TMA load (CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B) copies boxes "
                            f"exactly {UNPACKED_FP4_BOX} values wide; the box {box} is {box[-1]}")
        if gshape[-1] is not None and gshape[-1] % UNPACKED_FP4_BOX:
            raise ctx.error(f"an unpacking FP4 TMA load needs the innermost dim of {gbuf.name} a multiple of "
                            f"{UNPACKED_FP4_BOX} values, got {gshape[-1]}")
    inner = [b for b in box if b != 1]
    sshape = _static(list(sbuf.ty.shape), "the shared tile's shape", ctx)
    sext = _static([r.extent for r in s.region], "the shared region", ctx)
    base = linearize([r.min for r in s.region], list(sbuf.ty.shape))
    # A load's box lands through the async proxy and completes on an mbarrier: the pointer records no access
    # (rw mask 0), so no block barrier is planned for it (a warp-specialised producer runs alone); a store's
    # source is read by the issuing thread after the writes of others, so it stays a read.
    mask = 1 if C.scope_of(g.source) == "global" and s is not None and _is_store else 0

    def pointer(offset: Any, count: int) -> Any:
        return access_ptr(str(sbuf.ty.dtype), sbuf.data, offset, count, mask)

    swizzle = _tile_swizzle(ctx, sbuf)
    coords = coords_of(g)
    total = _count(box)
    width = {3: 128, 2: 64, 1: 32, 0: 0}[swizzle] // elem
    if _column_blocks(s, sshape, sext, inner, width or _wgmma_block(sshape, elem)):
        if not swizzle:  # one box the swizzle pass splits into the tile's column blocks (or refuses)
            return [(box, COLUMN_BLOCKS, pointer(base, total), coords)]
        # an annotated bank swizzle stores column blocks block-major: the slice's first block starts here
        lead = linearize([r.min for r in s.region[:-2]], sshape[:-2]) if len(sshape) > 2 else 0
        base = lead * sshape[-2] * sshape[-1] + tirx.floordiv(s.region[-1].min, width) * sshape[-2] * width
    else:
        k = len(inner)
        if [e for e in sext if e != 1] != inner or (k and sshape[-k:] != inner) or \
                any(not C.is_const(r.min, 0) for r in s.region[len(s.region) - k:]):
            raise ctx.error(f"the shared side {sbuf.name}{sext} must be whole trailing modes of its tile matching "
                            f"the TMA box {box} (one contiguous box), or whole column blocks of a bank-swizzled "
                            "tile or of a tile wgmma reads through swizzled descriptors")
    if not swizzle:
        if box[-1] > MAX_BOX and sext[-2:] != sshape[-2:]:
            raise ctx.error(f"TMA box {box} is wider than {MAX_BOX}: only a whole tile's box may be (split into the "
                            "column blocks of its swizzle)")
        return [(box, 0, pointer(base, total), coords)]
    if box[-1] % width:
        raise ctx.error(f"a {width * elem}-byte swizzled tile is copied in boxes {width} elements wide; the box "
                        f"{box} is not a multiple")
    blocks = box[-1] // width
    per_block = total // blocks
    out = []
    for b in range(blocks):
        bbox = [*box[:-1], width]
        bcoords = [coords[0] + b * width, *coords[1:]]
        out.append((bbox, swizzle, pointer(base + b * per_block, per_block), bcoords))
    return out


def coords_of(g: Any) -> list[Any]:
    """The box origin of global region `g`, innermost dim first (the order the copy instructions take)."""
    return [tirx.Cast("int32", r.min) for r in reversed(list(g.region))]


def _wgmma_block(sshape: list[int], elem: int) -> int:
    """Elements per column block of the layout `passes.swizzle_shared_operands` gives a wgmma operand of
    `sshape` (0 where wgmma cannot read it through a swizzled descriptor)."""
    from tilelang_cuda.wgmma_layout import tile_layout

    tile = tile_layout(sshape, elem) if len(sshape) >= 2 else None
    return 0 if tile is None else tile.block


def _column_blocks(s: Any, sshape: list[int], sext: list[int], inner: list[int], block: int) -> bool:
    """Whether shared region `s` is whole column blocks (`block` elements wide) of one tile: every row of the
    last two dims, columns ``[c0, c0 + w)`` on block boundaries, but not the whole row. Row-major such a slice is
    strided; in a bank-swizzled layout each block is one contiguous run (``T.tma_copy(KV[...],
    KV_s[:, j * 64:(j + 1) * 64])`` into a 256-wide wgmma operand)."""
    if not block or len(sshape) < 2 or sext[-1] == sshape[-1] or sext[-2] != sshape[-2]:
        return False
    if any(e != 1 for e in sext[:-2]) or [e for e in sext if e != 1] != inner or sext[-1] % block:
        return False
    return C.is_const(s.region[-2].min, 0) and bool(
        tvm.sym.Analyzer().can_prove(tirx.floormod(s.region[-1].min, block) == 0))


def _load_issue(ctx: Any, src: Any, dst: Any, bar: Any, cluster_mask: int | None, paired: bool) -> list[Any]:
    """The issuing thread's statements of a TMA load: ``expect_tx`` of the bytes on `bar`, then the box copies
    (multicast to `cluster_mask` from its lowest rank, the CTAs outside the mask loading their own box)."""
    boxes = _plan(ctx, src, dst)
    nbytes = payload_bytes(src, dst, sum(_count(box) for box, *_ in boxes))
    data_type = tma_data_type(src, dst)
    if data_type is not None and any(box[-1] != UNPACKED_FP4_BOX or swizzle not in (0, 3, COLUMN_BLOCKS)
                                     for box, swizzle, *_ in boxes):
        raise ctx.error(f"an unpacking FP4 TMA load fills {dst.source.name} in boxes of 128 values (128-byte rows) "
                        "unswizzled or in the 128-byte swizzle; its layout splits the rows otherwise")
    issue = [stmt("tl_mbarrier_expect_tx", addr_of(bar), nbytes)]
    if paired:  # every CTA of the cluster loads its box; CTA 0's copy of the barrier expects all of them
        size = _count(list(cluster_dims(ctx.func) or (1,)))
        issue = [tirx.IfThenElse(is_rank0(), stmt("tl_mbarrier_expect_tx", addr_of(bar), nbytes * size), None)]
    for box, swizzle, sptr, coords in boxes:
        tmap = map_token(str(src.source.name), box, swizzle, data_type)
        rank = len(box)
        form = "tl_tma_copy_load_2sm" if paired else "tl_tma_copy_load"
        unicast = stmt(f"{form}_{rank}d", tmap, sptr, addr_of(bar), *coords)
        if cluster_mask is None or cluster_mask < 0:
            issue.append(unicast)
            continue
        if rank != 2:
            raise ctx.error(f"multicast TMA loads here are 2-D; the box {box} is {rank}-D")
        rank_var = ext("tl_cluster_ctarank", dtype="int32")
        lowest = (cluster_mask & -cluster_mask).bit_length() - 1
        in_mask = tirx.bitwise_and(tirx.shift_right(tirx.IntImm("int32", cluster_mask), rank_var), 1) == 1
        multicast = tirx.IfThenElse(rank_var == lowest, stmt("tl_tma_load_multicast", tmap, sptr, addr_of(bar),
                                                             tirx.IntImm("uint16", cluster_mask), *coords), None)
        issue.append(tirx.IfThenElse(in_mask, multicast, unicast))
    return issue


def lower_tma_copy(ctx: Any) -> Any:
    src, dst, bar, mask, leader_threads, _eviction, *extra = ctx.args
    leader = _leader(ctx, C.as_int(leader_threads) or 0, extra)
    load = C.scope_of(src.source) == "global"
    if load:
        issue = _load_issue(ctx, src, dst, bar, C.as_int(mask), _completes_on_leader(ctx, bar))
        return Lowered(None, [tirx.IfThenElse(leader, seq(issue), None)])
    issue = [stmt("tl_fence_proxy_async_all")]
    for box, swizzle, sptr, coords in _plan(ctx, dst, src, _is_store=True):
        issue.append(stmt(f"tl_tma_copy_store_{len(box)}d", map_token(str(dst.source.name), box, swizzle), sptr,
                          *coords))
    issue.append(stmt("tl_tma_store_arrive"))
    return Lowered(None, [tirx.IfThenElse(leader, seq(issue), None)])


def is_cluster_barrier(func: Any, bar: Any) -> bool:
    """Whether the barrier element `bar` belongs to a ``T.alloc_cluster_barrier`` allocation."""
    buf = bar.source if isinstance(bar, tirx.BufferLoad) else None
    if buf is None:
        return False
    inits = C.collect(func.body, tvm.ir.Call, lambda c: is_call(c, "tl.init_cluster_barriers"))
    return any(isinstance(c.args[0], tirx.BufferLoad) and c.args[0].source.same_as(buf) for c in inits)


def _completes_on_leader(ctx: Any, bar: Any) -> bool:
    """A load on a cluster barrier on Blackwell (as the reference lowers it): each CTA issues the cta_group::2 form
    of the copy, whose bytes complete on CTA 0's copy of the barrier, and only CTA 0 expects them (the cluster's
    total), so the leader's MMA of a CTA pair waits for both CTAs' tiles."""
    if mask_of(ctx) is not None or missing(ctx.target, TCGEN05) is not None:  # sm_100a-family targets only
        return False
    return is_cluster_barrier(ctx.func, bar)


def mask_of(ctx: Any) -> int | None:
    mask = C.as_int(ctx.args[3])
    return None if mask is None or mask < 0 else mask


def _count(box: list[int]) -> int:
    n = 1
    for b in box:
        n *= b
    return n


def lower_create_descriptor(ctx: Any, args: list[Any] | None = None) -> Any:
    """A raw tensor map of a kernel tensor: the token of its map (box from the arguments)."""
    args = list(ctx.args) if args is None else args
    rank = C.as_int(args[1])
    tensor = args[2]
    if not (isinstance(tensor, tvm.ir.Var) and tirx.is_buffer_var(tensor) and C.scope_of(tensor) == "global"):
        raise ctx.error("global_addr must be a kernel tensor (A.data) whose map the launch can encode")
    box_inner_first = [C.as_int(v) for v in args[3 + 2 * rank - 1: 3 + 3 * rank - 1]]
    if None in box_inner_first:
        raise ctx.error("the box dims of a tensor map must be static")
    swizzle = C.as_int(args[-3]) or 0
    return map_token(str(tensor.name), list(reversed(box_inner_first)), swizzle)  # type: ignore[arg-type]


def lower_tma_load(ctx: Any, form: str = "tl_tma_copy_load") -> Any:
    desc, bar, smem, *coords = ctx.args
    if is_call(desc, "tl.create_tma_descriptor"):
        desc = lower_create_descriptor(ctx, list(desc.args))  # the map given inline, not lowered yet
    if not isinstance(desc, tvm.ir.StringImm):
        raise ctx.error("the descriptor must be a T.create_tma_descriptor(...) of a kernel tensor")
    if coords and C.as_int(coords[-1]) is not None and len(coords) > 1 and \
            len(coords) - 1 == len(parse_token(str(desc.value))[1]):
        coords = coords[:-1]  # a trailing eviction policy
    return ext(f"{form}_{len(coords)}d", desc, smem, addr_of(bar),
               *[tirx.Cast("int32", c) for c in coords])


def lower_gather4(ctx: Any) -> Any:
    src, dst, col, r0, r1, r2, r3, bar, _ev, *_extra = ctx.args
    k_box = C.as_int(dst.ty.shape[1])
    tmap = map_token(str(src.name), [1, k_box], 0)
    ptr = access_ptr(str(dst.ty.dtype), dst.data, 0, 4 * k_box, 2)
    rows = [tirx.Cast("int32", r) for r in (r0, r1, r2, r3)]
    return ext("tl_tma_gather4", tmap, ptr, addr_of(bar), tirx.Cast("int32", col), *rows)


def lower_scatter4(ctx: Any) -> Any:
    src, dst, col, r0, r1, r2, r3, _ev, *_extra = ctx.args
    k_box = C.as_int(src.ty.shape[1])
    tmap = map_token(str(dst.name), [1, k_box], 0)
    ptr = access_ptr(str(src.ty.dtype), src.data, 0, 4 * k_box, 1)
    rows = [tirx.Cast("int32", r) for r in (r0, r1, r2, r3)]
    return Lowered(None, [stmt("tl_fence_proxy_async_all"),
                          stmt("tl_tma_scatter4", tmap, ptr, tirx.Cast("int32", col), *rows)])


MAX_BULK_RUNS = 64  # contiguous runs one cluster copy issues as bulk copies (more: the per-element form)


def _runs(region: Any) -> tuple[int, list[Any]] | None:
    """``(elements per run, element offset of each run)``: the region as contiguous runs of its tile (the modes
    inside the innermost partial one are whole); None when the extents or the tile's shape are not static."""
    import itertools

    shape = [C.as_int(s) for s in region.source.ty.shape]
    ext = [C.as_int(r.extent) for r in region.region]
    if None in shape or None in ext:
        return None
    run, k = 1, len(ext) - 1
    while k >= 0:
        run *= ext[k]
        if ext[k] != shape[k]:
            break
        k -= 1
    k = max(k, 0)
    mins = [r.min for r in region.region]
    offsets = [linearize([m + i for m, i in zip(mins[:k], outer)] + mins[k:], shape)
               for outer in itertools.product(*[range(e) for e in ext[:k]])]
    return run, offsets


def _bulk_plan(ctx: Any, src: Any, dst: Any) -> tuple[int, list[tuple[Any, Any]]] | str:
    """``(bytes per run, [(src offset, dst offset)])`` of a copy the bulk engine can do, else why not."""
    rs, rd = _runs(src), _runs(dst)
    if rs is None or rd is None:
        return "the region's extents are not static"
    (run, s_off), (d_run, d_off) = rs, rd
    elem = dtype_bytes(str(src.source.ty.dtype))
    if run != d_run or len(s_off) != len(d_off):
        return "the source and destination regions are cut into different contiguous runs"
    if (run * elem) % 16:
        return (f"Cluster bulk copy {'size' if len(s_off) == 1 else 'row size'} {run * elem} bytes is not a "
                f"multiple of 16")
    if len(s_off) > MAX_BULK_RUNS:
        return f"the copy is {len(s_off)} contiguous runs (bulk copies: at most {MAX_BULK_RUNS})"
    analyzer = tvm.sym.Analyzer()
    for off in (*s_off, *d_off):
        if not analyzer.can_prove_equal(tirx.floormod(off * elem, 16), 0):
            return f"a run starts at element offset {off}, not 16-byte aligned"
    return run * elem, list(zip(s_off, d_off))


def _scope_threads(ctx: Any, extra: list[Any]) -> tuple[int, int]:
    """``(first thread, thread count)`` of the threads that reach the copy."""
    if len(extra) > 1 and C.as_int(extra[1]):
        return C.as_int(extra[0]) or 0, C.as_int(extra[1])
    return 0, C.block_threads(ctx.func)


def _copy_to_cta(ctx: Any, src: Any, dst: Any, block: Any, bar: Any, extra: list[Any]) -> Any:
    """Shared tile -> CTA `block`'s copy of a shared tile (distributed shared memory)."""
    import warnings

    for name, r in (("source", src), ("destination", dst)):
        if C.scope_of(r.source) not in ("shared", "shared.dyn"):
            raise ctx.error(f"with dst_block= the {name} must be a shared tile, got {C.scope_of(r.source)}")
    if str(src.source.ty.dtype) != str(dst.source.ty.dtype):
        raise ctx.error(f"copies between tiles of one dtype, got {src.source.ty.dtype} -> {dst.source.ty.dtype}")
    cta = tirx.Cast("int32", block)
    leader = _leader(ctx, 0, extra)
    first, size = _scope_threads(ctx, extra)
    whole = size == _scope_threads(ctx, [])[1]
    # the source was written by the block's threads: a block barrier first (inside a CTA-uniform `if`, where the
    # barrier planner does not insert one); a copy in part of the block relies on the user's synchronisation
    sync = [stmt("tl_named_barrier_sync", 0, size)] if whole else []  # bar.sync 0: __syncthreads
    has_bar = not isinstance(bar, tirx.IntImm)
    plan = _bulk_plan(ctx, src, dst) if has_bar else "no remote_barrier"
    dtype = str(src.source.ty.dtype)
    if not isinstance(plan, str):
        run_bytes, pairs = plan
        run = run_bytes // dtype_bytes(dtype)

        def ptr(buf: Any, off: Any, mask: int) -> Any:
            return access_ptr(dtype, buf.data, off, run, mask)

        issue = [stmt("tl_fence_proxy_async_all"),
                 stmt("tl_mbarrier_arrive_expect_tx_cluster", addr_of(bar), cta, run_bytes * len(pairs))]
        issue += [stmt("tl_bulk_copy_to_cluster", ptr(dst.source, d, 0), ptr(src.source, s, 0), run_bytes,
                       addr_of(bar), cta) for s, d in pairs]
        return Lowered(None, [*sync, tirx.IfThenElse(leader, seq(issue), None)])
    if has_bar:
        warnings.warn(f"T.copy_cluster: {plan}; the copy stores element by element into CTA {block}'s tile",
                      stacklevel=2)
    s_ext = [C.as_int(r.extent) for r in src.region]
    d_ext = [C.as_int(r.extent) for r in dst.region]
    if None in s_ext or None in d_ext:
        raise ctx.error("copies regions of static extents")
    total = _count(s_ext)
    it = tirx.Var("cluster_copy_i", "int32")
    flat = it * size + (ctx.linear_thread() - first)

    def indices(region: Any, ext_: list[int]) -> list[Any]:
        out, rest = [], flat
        for e in reversed(ext_):
            out.append(tirx.floormod(rest, e))
            rest = tirx.floordiv(rest, e)
        return [r.min + i for r, i in zip(region.region, reversed(out))]

    value = tirx.BufferLoad(src.source, indices(src, s_ext))
    store = stmt("tl_st_cluster", tirx.address_of(tirx.BufferLoad(dst.source, indices(dst, d_ext))), value, cta)
    body: list[Any] = [*sync, tirx.For(it, 0, (total + size - 1) // size, tirx.ForKind.SERIAL,
                                tirx.IfThenElse(flat < total, store, None))]
    if has_bar:  # every store of the scope done, then one arrival (release at cluster scope) on the remote barrier
        if not whole:
            raise ctx.error(f"an element-wise cluster copy with remote_barrier= runs in the whole block (it "
                            f"synchronises the block before arriving); it runs in {size} threads from {first}")
        body += [*sync,
                 tirx.IfThenElse(leader, stmt("tl_mbarrier_arrive_cluster", addr_of(bar), cta), None)]
    return Lowered(None, body)


def lower_copy_cluster(ctx: Any) -> Any:
    """``T.copy_cluster``. With `dst_block`: the tile goes into CTA `dst_block`'s copy of the destination. Given
    `remote_barrier`, one thread arrives on that CTA's copy of the barrier (one arrival, expecting the bytes) and
    issues one ``cp.async.bulk.shared::cluster.shared::cta`` per contiguous run (16-byte multiples); other copies,
    and copies without a barrier, store element by element through ``mapa`` addresses (with a barrier: then a
    block barrier and the arrival; without: the user's ``T.cluster_sync`` orders them). The source tile must stay
    unchanged until the destination has waited. With `cluster_mask`: `_multicast_load`."""
    src, dst, block, mask, bar, _eviction, *extra = ctx.args
    if not (isinstance(block, tirx.IntImm) and block.value < 0):
        return _copy_to_cta(ctx, src, dst, block, bar, extra)
    return _multicast_load(ctx, src, dst, C.as_int(mask), bar, extra)


def _multicast_load(ctx: Any, src: Any, dst: Any, mask: int, bar: Any, extra: list[Any]) -> Any:
    """A TMA load multicast to the CTAs of `mask`, awaited here. `bar` is the one-arrival cluster barrier the
    language call allocated right before (its initialisation ends with a cluster barrier, so every CTA's copy is
    ready before a peer's multicast completes bytes on it, and no CTA still reads the previous contents of the
    tile): the issuing thread expects the bytes, issues the load and arrives; every thread waits on phase 0."""
    if C.scope_of(src.source) != "global" or C.scope_of(dst.source) not in ("shared", "shared.dyn"):
        raise ctx.error(f"with cluster_mask= the copy is a TMA load from a global tensor into a shared tile, got "
                        f"{C.scope_of(src.source)} -> {C.scope_of(dst.source)}")
    issue = [*_load_issue(ctx, src, dst, bar, mask, False), stmt("tl_mbarrier_arrive", addr_of(bar))]
    return Lowered(None, [tirx.IfThenElse(_leader(ctx, 0, extra), seq(issue), None),
                          stmt("tl_mbarrier_wait_parity", addr_of(bar), 0)])


# -- TMA stores (bulk groups)
simple("tma_store_arrive", TMA, "tl_tma_store_arrive")


@lowering("tma_store_wait", TMA)
def _tma_store_wait(ctx: Any) -> Any:
    return ext("tl_tma_store_wait_n", ctx.int_arg(0), tirx.IntImm("int32", 1 if ctx.int_arg(1) else 0))


LOWER.update({
    "tl.tma_copy": (TMA, lower_tma_copy),
    "tl.create_tma_descriptor": (TMA, lower_create_descriptor),
    "tl.tma_load": (TMA, lower_tma_load),
    "tl.tma_load_2sm": (TCGEN05, lambda ctx: lower_tma_load(ctx, "tl_tma_copy_load_2sm")),
    "tl.tma_gather4": (GATHER4, lower_gather4),
    "tl.tma_scatter4": (GATHER4, lower_scatter4),
    "tl.copy_cluster": (TMA, lower_copy_cluster),
})
