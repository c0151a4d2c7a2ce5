"""SwizzleSharedOperands: XOR-swizzle the shared tiles ``ldmatrix`` reads, so its 8-row reads are free of bank
conflicts.

``ldmatrix`` has each of 8 lanes read one 16-byte row segment of an 8x8 matrix: the same column chunk of 8
consecutive rows. With a row of ``P`` 16-byte chunks (``P * 16`` bytes), row ``r`` chunk ``c`` sits in bank
slot ``(r * P + c) % 8`` (a slot = 4 banks), so unswizzled rows collide whenever ``P`` is even. Storing chunk
``c`` of row ``r`` at chunk ``c ^ f(r)`` with ``f(r) = (r // max(1, 8 // P)) % min(P, 8)`` makes the 8 slots
distinct for every chunk: for ``P >= 8`` the slot is ``c ^ (r % 8)``; for ``P < 8``, ``8 // P`` consecutive
rows fill one 128-byte line at distinct ``r * P % 8`` and ``f`` separates the lines. Elements keep their place
inside a chunk, so 16-byte accesses (``cp.async``, ``ldmatrix`` rows) stay whole.

The pass runs after tile-op lowering on every shared buffer of the kernel that some ``ldmatrix`` reads, when
its rows are ``P`` in 2, 4 or a multiple of 8 chunks and its row count is a multiple of 8, and every access
to it can be rewritten: loads and stores (indices ``[..., r, c]``) and ``tvm_access_ptr`` pointers of at
most one chunk at a chunk-aligned offset (the ``cp.async`` destinations). Any other use, or indices that
already hold an XOR (a user's ``T.annotate_layout`` swizzle applied by core), keeps the buffer as it is.
The rewrite is a bijection within each row applied to every access, so results do not change.

Tiles a ``wgmma`` reads through a swizzled matrix descriptor (their address feeds ``tl_wgmma_desc_sw``) get
the hardware layout of `tilelang_cuda.wgmma_layout` instead (block-major column blocks of 32/64/128 bytes,
stored as ``[lead.., blocks, R, W/e]``); the GEMM lowering chooses that path only for tiles the pass can rewrite,
so a use it cannot rewrite is an internal LoweringError, never a silently wrong kernel. In such kernels every
``shared.dyn`` tile is padded to a multiple of 1024 bytes, so each starts on a swizzle repeat in the pool.
"""

from __future__ import annotations

import math
import re
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import dtype_bytes
from tilelang.transform import utils as C
from tilelang_cuda.tileops.dialect.tma import COLUMN_BLOCKS, MAX_BOX, map_token, parse_token
from tilelang_cuda.wgmma_layout import SwizzledTile, tile_layout

_SHARED = ("shared", "shared.dyn")
CHUNK_BYTES = 16
POOL_ALIGN = 1024  # the 128-byte swizzle's repeat: tiles wgmma reads through swizzled descriptors start on it
DESC_SW = "tl_wgmma_desc_sw"  # tl_wgmma_desc_sw(tvm_access_ptr(tile, ..), lbo, sbo, mode): a swizzled descriptor
DESC_NAMES = (DESC_SW, "tl_umma_desc_sw")  # the tcgen05 form (sm_100a) reads the same hardware layouts
TMA_COPY = re.compile(r"tl_tma_copy_(load|load_2sm|store)_(\d)d")
TMA_SWIZZLE = {128: 3, 64: 2, 32: 1}  # CUtensorMapSwizzle of a swizzle width in bytes


def swizzle_params(shape: list[Any], dtype: str) -> tuple[int, int, int] | None:
    """``(vec, rep, period)`` for a tile of `shape` (``f(r) = (r // rep) % period``, chunks of `vec` elements),
    or None when the tile cannot be swizzled."""
    dims = [C.as_int(s) for s in shape]
    if len(dims) < 2 or None in dims:
        return None
    elem = dtype_bytes(dtype)
    rows, cols = dims[-2], dims[-1]
    if elem > CHUNK_BYTES or (cols * elem) % CHUNK_BYTES or rows % 8:
        return None
    vec = CHUNK_BYTES // elem
    chunks = cols // vec
    if chunks not in (2, 4) and chunks % 8:
        return None
    return vec, max(1, 8 // chunks), min(chunks, 8)


def _swizzle_col(row: Any, col: Any, params: tuple[int, int, int]) -> Any:
    vec, rep, period = params
    f = tirx.floormod(tirx.floordiv(row, rep) if rep > 1 else row, period)
    return tirx.bitwise_xor(tirx.floordiv(col, vec), f) * vec + tirx.floormod(col, vec)


def _call_name(call: Any) -> str | None:
    if isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op):
        if call.op.name == "tirx.call_extern":
            return "extern:" + str(call.args[0].value)
        return call.op.name
    return None


def _ptr_buffer(call: Any) -> Any:
    """The buffer a ``tvm_access_ptr(dtype, buffer_data(buf), offset, ..)`` call points into; None otherwise."""
    if _call_name(call) != "tirx.tvm_access_ptr":
        return None
    data = call.args[1]
    return data.args[0] if _call_name(data) == "tirx.buffer_data" else None


def _candidates(body: Any) -> set[Any]:
    """Shared buffers allocated in `body` that an ``ldmatrix`` reads."""
    allocated = {a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) in _SHARED}
    found: set[Any] = set()

    def on_call(call: Any) -> None:
        if (_call_name(call) or "").startswith("extern:tl_ldmatrix"):
            for ld in C.collect(call, tvm.ir.TensorLoad):  # address_of(tile[..])
                if ld.source in allocated:
                    found.add(ld.source)
            for ptr in C.collect(call, tvm.ir.Call, lambda c: _ptr_buffer(c) in allocated):
                found.add(_ptr_buffer(ptr))  # tvm_access_ptr(dtype, tile, offset, ..)

    C.walk(body, [(tvm.ir.Call, on_call)])
    return found


def descriptor_tiles(body: Any) -> set[Any]:
    """Shared buffers allocated in `body` whose address feeds a swizzled wgmma descriptor."""
    allocated = {a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) in _SHARED}
    found: set[Any] = set()

    def on_call(call: Any) -> None:
        if _call_name(call) in tuple("extern:" + d for d in DESC_NAMES):
            buf = _ptr_buffer(call.args[1])
            if buf in allocated:
                found.add(buf)

    C.walk(body, [(tvm.ir.Call, on_call)])
    return found


def _chunk_ramp(idx: Any, vec: int, analyzer: Any) -> bool:
    """Whether a vector index is a dense run inside one chunk (``Ramp(base, 1, n)``, base chunk-aligned,
    ``n <= vec``)."""
    return (isinstance(idx, tirx.Ramp) and C.as_int(idx.stride) == 1 and C.as_int(idx.lanes) is not None
            and C.as_int(idx.lanes) <= vec and analyzer.can_prove(tirx.floormod(idx.base, vec) == 0))


def _is_tma_copy(call: Any) -> bool:
    """A ``tl_tma_copy_{load,load_2sm,store}_Nd`` extern call."""
    return TMA_COPY.fullmatch((_call_name(call) or "")[7:]) is not None


def _tma_pointers(body: Any, buf: Any) -> list[Any]:
    """The pointers into `buf` that are the shared side of an unswizzled ``T.tma_copy`` box covering whole tiles,
    or whole column blocks of one (`tileops.dialect.tma.COLUMN_BLOCKS`, which `_plan` checked against this
    pass's layout)."""
    out = []
    tile = C.as_int(buf.ty.shape[-1]) * C.as_int(buf.ty.shape[-2]) if len(buf.ty.shape) >= 2 else None
    for call in C.collect(body, tvm.ir.Call, _is_tma_copy):
        swizzle = parse_token(str(call.args[1].value))[2]
        ptr = call.args[2]
        if _ptr_buffer(ptr) is None or not _ptr_buffer(ptr).same_as(buf):
            continue
        if swizzle == COLUMN_BLOCKS or (swizzle == 0 and tile and C.as_int(ptr.args[3]) == tile):
            out.append(ptr)
    return out


def _rewritable(body: Any, buf: Any, params: tuple[int, int, int], analyzer: Any, tma_ok: bool = False) -> bool:
    """Whether every use of `buf` in `body` is a load, a store, its allocation or a one-chunk access pointer
    (with `tma_ok`, also whole-tile TMA boxes, which `_rewrite` splits into swizzled column blocks), and no
    access already XORs its indices (a layout the user annotated, which core applied)."""
    total = len(C.collect(body, tvm.ir.Var, lambda v: v.same_as(buf)))
    loads = C.collect(body, tvm.ir.TensorLoad, lambda ld: ld.source.same_as(buf))
    stores = C.collect(body, tirx.BufferStore, lambda st: st.buffer.same_as(buf))
    if any(C.collect(list(x.indices), tirx.BitwiseXor) for x in [*loads, *stores]):
        return False
    vec = params[0]
    for x in [*loads, *stores]:
        if C.collect(list(x.indices[:-1]), tirx.Ramp) or (
                isinstance(x.indices[-1], tirx.Ramp) and not _chunk_ramp(x.indices[-1], vec, analyzer)):
            return False
    handled = len(loads) + len(stores)
    handled += len(C.collect(body, tirx.AllocBuffer, lambda a: a.buffer.same_as(buf)))
    boxes = _tma_pointers(body, buf) if tma_ok else []
    for call in C.collect(body, tvm.ir.Call, lambda c: _call_name(c) == "tirx.tvm_access_ptr"):
        target = _ptr_buffer(call)
        if target is None or not target.same_as(buf):
            continue
        if any(call.same_as(b) for b in boxes):
            handled += 1
            continue
        extent = C.as_int(call.args[3])
        if extent is None or extent > vec or not analyzer.can_prove(tirx.floormod(call.args[2], vec) == 0):
            return False
        handled += 1
    return total == handled


def _hw_buffer(buf: Any, tile: SwizzledTile) -> Any:
    """`buf` re-declared as ``[lead.., blocks, R, W/e]`` (itself when the tile is one column block)."""
    blocks = tile.cols // tile.block
    if blocks == 1:
        return buf
    shape = [*list(buf.ty.shape)[:-2], blocks, tile.rows, tile.block]
    return tirx.decl_buffer(shape, str(buf.ty.dtype), name=buf.name, scope=C.scope_of(buf))


def _hw_indices(tile: SwizzledTile, idx: list[Any]) -> list[Any]:
    *lead, r, c = idx
    lanes = C.as_int(c.lanes) if isinstance(c, tirx.Ramp) else None
    col = c.base if lanes is not None else c
    inner = tirx.floormod(col, tile.block)
    chunk = tirx.bitwise_xor(tirx.floordiv(inner, tile.vec), tile.phase(r))
    new_c = chunk * tile.vec + tirx.floormod(inner, tile.vec)
    if lanes is not None:
        new_c = tirx.Ramp(new_c, 1, lanes)
    if tile.cols == tile.block:
        return [*lead, r, new_c]
    return [*lead, tirx.floordiv(col, tile.block), r, new_c]


def _rewrite(body: Any, bufs: dict[Any, tuple[int, int, int]], hw: dict[Any, SwizzledTile] | None = None) -> Any:
    hw = hw or {}
    new_buf = {buf: _hw_buffer(buf, tile) for buf, tile in hw.items()}

    def indices(buf: Any, idx: list[Any]) -> list[Any]:
        if buf in hw:
            return _hw_indices(hw[buf], idx)
        *lead, r, c = idx
        if isinstance(c, tirx.Ramp):
            return [*lead, r, tirx.Ramp(_swizzle_col(r, c.base, bufs[buf]), 1, c.lanes)]
        return [*lead, r, _swizzle_col(r, c, bufs[buf])]

    def on_load(ld: Any, m: Any) -> Any:
        idx = [m.mutate(i) for i in ld.indices]
        if ld.source in bufs or ld.source in hw:
            return tirx.BufferLoad(new_buf.get(ld.source, ld.source), indices(ld.source, idx))
        return tirx.BufferLoad(ld.source, idx)

    def on_store(st: Any, m: Any) -> Any:
        idx = [m.mutate(i) for i in st.indices]
        value = m.mutate(st.value)
        if st.buffer in bufs or st.buffer in hw:
            return tirx.BufferStore(new_buf.get(st.buffer, st.buffer), value, indices(st.buffer, idx))
        return tirx.BufferStore(st.buffer, value, idx)

    def on_alloc(a: Any, m: Any) -> Any:
        if a.buffer not in new_buf:
            return m.default_mutate(a)
        annotations = {k: v for k, v in a.annotations.items() if str(k) != "tl.layout"}
        return tirx.AllocBuffer(new_buf[a.buffer], annotations)

    def on_call(call: Any, m: Any) -> Any:
        buf = _ptr_buffer(call)
        if buf is not None and (buf in bufs or buf in hw):
            data = call.args[1]
            offset = m.mutate(call.args[2])
            args = list(call.args)
            if buf in hw:
                args[1] = tirx.call_intrin("handle", "tirx.buffer_data", new_buf[buf]) \
                    if new_buf[buf] is not buf else data
                args[2] = hw[buf].flat_offset(offset)
            else:
                cols = C.as_int(buf.ty.shape[-1])
                row, col = tirx.floordiv(offset, cols), tirx.floormod(offset, cols)
                args[2] = row * cols + _swizzle_col(row, col, bufs[buf])
            return tirx.call_intrin("handle", "tirx.tvm_access_ptr", *args)
        return m.default_mutate(call)

    def on_eval(ev: Any, m: Any) -> Any:
        """A whole-tile TMA box of a hardware-swizzled tile: one box per column block, in the tile's swizzle."""
        call = ev.value
        name = (_call_name(call) or "")[7:]
        if TMA_COPY.fullmatch(name) is None or _ptr_buffer(call.args[2]) not in hw:
            return m.default_mutate(ev)
        buf = _ptr_buffer(call.args[2])
        tile = hw[buf]
        tensor, dims, _, data_type = parse_token(str(call.args[1].value))
        ptr = call.args[2]
        load = name.startswith("tl_tma_copy_load")
        coord_at = 4 if load else 3
        coords = list(call.args[coord_at:])
        new_dims = [*dims[:-1], tile.block]
        token = map_token(tensor, new_dims, TMA_SWIZZLE[tile.width], data_type)
        data = tirx.call_intrin("handle", "tirx.buffer_data", new_buf[buf]) if new_buf[buf] is not buf \
            else ptr.args[1]
        out = []
        for b in range(dims[-1] // tile.block):  # the whole row, or the column blocks `_plan` checked
            offset = tile.flat_offset(m.mutate(ptr.args[2]) + b * tile.block)
            p = tirx.call_intrin("handle", "tirx.tvm_access_ptr", ptr.args[0], data, offset,
                                 tile.rows * tile.block, ptr.args[4])
            args = [call.args[0], token, p, *call.args[3:coord_at], coords[0] + b * tile.block, *coords[1:]]
            out.append(tirx.Evaluate(tvm.ir.Call(call.op, args, ret_ty=call.ty)))
        return C.seq(out)

    return tvm_ffi.structural_mutate(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                            (tirx.AllocBuffer, on_alloc), (tirx.Evaluate, on_eval),
                                            (tvm.ir.Call, on_call)])


def check_boxes(func: Any) -> None:
    """Refuse a TMA box still wider than the hardware's 256 elements (a whole-tile box of rows wider than that is
    only valid once split into the column blocks of a swizzled tile, `_rewrite`) or still filling a column slice
    of a tile: this tile was not swizzled."""

    for call in C.collect(func.body, tvm.ir.Call, _is_tma_copy):
        tensor, dims, swizzle, _ = parse_token(str(call.args[1].value))
        if swizzle == COLUMN_BLOCKS:
            buf = _ptr_buffer(call.args[2])
            raise C.lowering_error(func, f"a T.tma_copy of {tensor} fills a column slice of shared tile "
                                   f"{getattr(buf, 'name', '?')}, whose rows are strided in its row-major layout: "
                                   "only a tile wgmma reads through swizzled descriptors (or one annotated with a "
                                   "bank swizzle) stores column blocks contiguously; copy whole rows of the tile")
        if max(dims) > MAX_BOX:
            buf = _ptr_buffer(call.args[2])
            raise C.lowering_error(func, f"a TMA box of {tensor} is {dims} elements: wider than {MAX_BOX}, and "
                                   f"shared tile {getattr(buf, 'name', '?')} is not read through swizzled wgmma "
                                   "descriptors, whose column blocks would split it; copy narrower tiles or pass "
                                   "tl.disable_warp_specialized")


def _pad_pool(body: Any) -> Any:
    """Every ``shared.dyn`` tile grown (its first dim) to a multiple of `POOL_ALIGN` bytes: TVM packs the tiles
    into one pool at offsets that sum tile sizes, so each tile then starts on a swizzle repeat (the pool itself is
    aligned to 1024 bytes by `tilelang_cuda.intrinsics.with_header`)."""
    rename = {}
    for a in C.allocations(body):
        buf = a.buffer
        dims = [C.as_int(d) for d in buf.ty.shape]
        if C.scope_of(buf) != "shared.dyn" or None in dims:
            continue
        inner = dtype_bytes(str(buf.ty.dtype))
        for d in dims[1:]:
            inner *= d
        if (dims[0] * inner) % POOL_ALIGN == 0:
            continue
        step = POOL_ALIGN // math.gcd(inner, POOL_ALIGN)
        shape = [(dims[0] + step - 1) // step * step, *dims[1:]]
        rename[buf] = tirx.decl_buffer(shape, str(buf.ty.dtype), name=buf.name, scope="shared.dyn")
    return C.substitute(body, rename)


def SwizzleSharedOperands(target: Any = None) -> tvm.transform.Pass:
    """Swizzle the shared tiles ``ldmatrix`` reads (see the module docstring)."""

    @C.prim_func_pass("cuda.swizzle_shared_operands")
    def swizzle(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))
        hw = {}
        for buf in descriptor_tiles(func.body):
            tile = tile_layout(list(buf.ty.shape), dtype_bytes(str(buf.ty.dtype)), elem_sizes=(1, 2))
            if tile is None or not _rewritable(func.body, buf, (tile.vec, 1, 1), analyzer, tma_ok=True):
                raise C.lowering_error(func, f"internal: wgmma reads shared tile {buf.name} through a swizzled "
                                       "descriptor, but not every access to it can take the swizzled layout")
            hw[buf] = tile
        chosen = {}
        for buf in _candidates(func.body) - set(hw):
            params = swizzle_params(list(buf.ty.shape), str(buf.ty.dtype))
            if params is not None and _rewritable(func.body, buf, params, analyzer):
                chosen[buf] = params
        if not chosen and not hw:
            check_boxes(func)
            return func
        body = _rewrite(func.body, chosen, hw)
        func = C.with_body(func, _pad_pool(body) if hw else body)
        check_boxes(func)
        return func

    return swizzle
