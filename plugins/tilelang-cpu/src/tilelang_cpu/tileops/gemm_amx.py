"""``tl.gemm`` on the AMX tile unit (priority 4; llvm targets whose CPU features have the instruction).

==========================  =====================  ==============================
A, B  ->  C                 instruction            LLVM feature of the target
==========================  =====================  ==============================
bfloat16 -> float32         ``tdpbf16ps``          ``amx-tile`` + ``amx-bf16``
float16 -> float32          ``tdpfp16ps``          ``amx-tile`` + ``amx-fp16``
int8 -> int32               ``tdpbssd``            ``amx-tile`` + ``amx-int8``
==========================  =====================  ==============================

The features are the target's (``mcpu`` / ``mattr``, `tilelang_cpu.isa.dot_units`), never the CPU's name. An AMX
tile register holds 16 rows of 64 bytes: C tiles are 16 x 16 fp32 / int32, A tiles 16 rows x 64 bytes of K
(32 bf16 / fp16, 64 int8), B tiles the same K as 16 rows of 16 columns x 4 bytes -- pairs (quads) of k
interleaved per column, the layout of `tilelang_cpu.gemm_vnni_pack` (panels 16 columns wide). Each micro tile is
2 x 2 C tiles (32 x 32) accumulated over the call's whole K in tile registers 0-3, with A in 4-5 and B in 6-7::

    C tiles <- 0 or C                      tilezero / tileloadd (C's own row stride)
    for s in range(K / 32):                # 64 for int8
        [prefetch of the next B panels]    # one column pair ahead, into L2
        A0 <- A[i0:i0+16, s*32:]           # tileloadd straight from A, its row stride
        B0 <- panel(j0)[s]; C00 += A0 B0   # tileloadd (64-byte rows), tdpbf16ps
        B1 <- panel(j0+16)[s]; C01 += A0 B1
        A1 <- A[i0+16:i0+32, s*32:]; C10 += A1 B0; C11 += A1 B1
    C <- C tiles                           tilestored

Micro tiles walk column pairs outermost (the pair's B panels stay in L1/L2 while every row strip reads them).
Edges: rows past the last multiple of 32 (or columns) run with a second tile configuration whose tiles have
fewer rows (columns) -- ``ldtilecfg`` once per group of micro tiles, ``tilerelease`` at the end of the call. A K
that is not a multiple of the tile step ends with one step whose A is a zero-padded copy of the last columns; a
transposed A (or one without contiguous rows) is copied to zero-padded rows first. B is packed once before the
grid for the whole tensor where the grid rereads it (`gemm_vnni_pack.pack_whole`), else per call.

Linux hands AMX tile state to a process only after ``arch_prctl(ARCH_REQ_XCOMP_PERM)``: the codegen marks
kernels that use AMX (`uses_amx`, artifact metadata ``cpu_amx``) and the execution backend asks for it before the
first call (`tilelang_cpu.amx_permission`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tilelang.backend import TileOpImpl

__all__ = ["AMX_GEMM", "AmxKind", "amx_kind", "tile_config", "uses_amx"]

TILE_ROWS = 16
ROW_BYTES = 64
PAIR = 2 * TILE_ROWS  # rows (columns) of a 2 x 2 micro tile
_C_TILES, _A_TILES, _B_TILES = 0, 4, 6  # first tile register of each operand
_MAX_PREFETCH = 8  # prefetches per K step (the L1 fill buffers belong to the tile loads)


class AmxKind(NamedTuple):
    """One AMX dot product: the LLVM intrinsic, the `DotUnits` field that enables it, and the input width."""

    intrinsic: str
    unit: str
    in_bytes: int

    @property
    def group(self) -> int:
        """Consecutive k per 32-bit lane of B."""
        return 4 // self.in_bytes

    @property
    def k_step(self) -> int:
        """K per tile step (one 64-byte A row)."""
        return ROW_BYTES // self.in_bytes


_KINDS = {
    ("bfloat16", "float32"): AmxKind("llvm.x86.tdpbf16ps", "amx_bf16", 2),
    ("float16", "float32"): AmxKind("llvm.x86.tdpfp16ps", "amx_fp16", 2),
    ("int8", "int32"): AmxKind("llvm.x86.tdpbssd", "amx_int8", 1),
}


def amx_kind(target: Any, a_dtype: str, b_dtype: str, c_dtype: str) -> AmxKind | None:
    """The `AmxKind` for a gemm with these dtypes on `target`, or None (no such instruction, or not on it)."""
    from tilelang.backend.sdk import kind_of
    from tilelang_cpu.isa import dot_units

    kind = _KINDS.get((a_dtype, c_dtype)) if a_dtype == b_dtype else None
    if kind is None or str(kind_of(target)) != "llvm":
        return None
    return kind if getattr(dot_units(target), kind.unit) else None


def _applies(ctx: Any) -> bool:
    from tilelang.transform import utils as C
    from tilelang_cpu.tileops.common import row_stride

    if ctx.num_threads != 1 or len(ctx.args) < 7 or not ctx.options.get("vectorize", True):
        return False
    try:
        regions = [ctx.region(i) for i in range(3)]
    except Exception:
        return False
    if any(len(r.region) < 2 or any(C.as_int(x.extent) is None for x in r.region[-2:]) for r in regions):
        return False
    a, b, c = (str(r.source.ty.dtype) for r in regions)
    return amx_kind(ctx.target, a, b, c) is not None and row_stride(regions[2].source) is not None


def tile_config(rows: list[int], cols: list[int], c_bytes: int = 4) -> list[int]:
    """The 64-byte ``ldtilecfg`` block (palette 1) for a micro tile of ``len(rows) x len(cols)`` C tiles with
    those row / column counts: C tiles 0-3 (``a * len(cols) + b``), A tiles 4-5, B tiles 6-7."""
    colsb = [0] * 8
    nrows = [0] * 8
    for a, r in enumerate(rows):
        for b, c in enumerate(cols):
            colsb[_C_TILES + a * len(cols) + b], nrows[_C_TILES + a * len(cols) + b] = c * c_bytes, r
        colsb[_A_TILES + a], nrows[_A_TILES + a] = ROW_BYTES, r
    for b, c in enumerate(cols):
        colsb[_B_TILES + b], nrows[_B_TILES + b] = c * 4, TILE_ROWS
    block = [1] + [0] * 15
    for c in colsb:
        block += [c & 0xFF, c >> 8]
    return block + [0] * 16 + nrows + [0] * 8


def _intrin(name: str, *args: Any) -> Any:
    from tvm import tirx

    return tirx.Evaluate(tirx.call_llvm_intrin("void", f"llvm.x86.{name}", *args))


def _tile(t: int) -> Any:
    from tvm import tirx

    return tirx.IntImm("int8", t)


def _i64(x: Any) -> Any:
    from tvm import tirx

    return tirx.Cast("int64", x) if not isinstance(x, int) else tirx.const(x, "int64")


def _load_config(rows: list[int], cols: list[int], c_bytes: int) -> list[Any]:
    """Allocate, fill and load one tile configuration (16 int32 words on the stack)."""
    from tvm import tirx

    from tilelang_cpu.tileops.common import pointer, scratch

    block = tile_config(rows, cols, c_bytes)
    words = [int.from_bytes(bytes(block[i:i + 4]), "little", signed=True) for i in range(0, 64, 4)]
    cfg = scratch("amx_config", 16, "int32")
    fill = [tirx.BufferStore(cfg, tirx.const(w, "int32"), [i]) for i, w in enumerate(words)]
    return [tirx.AllocBuffer(cfg), *fill, _intrin("ldtilecfg", pointer(cfg, [0]))]


def _split(extent: int) -> tuple[int, list[int]]:
    """``(full 32-wide pairs, tile sizes of the rest)``: 70 -> (2, [6]), 50 -> (1, [16, 2])."""
    full, rest = divmod(extent, PAIR)
    if not rest:
        return full, []
    return full, [TILE_ROWS, rest - TILE_ROWS] if rest > TILE_ROWS else [rest]


def _rows_copy(a: Any, ta: bool, m: int, k: int, start: int, width: int, dst: Any) -> Any:
    """``dst[i * width + t] = op(A)[i, start + t]`` for ``start + t < k``, zero beyond (`dst` of A's
    `bits_dtype`)."""
    from tvm import tirx

    from tilelang.backend.sdk import operand_index
    from tilelang.transform import utils as C
    from tilelang_cpu.tileops.common import bits_view, loop

    src, decls = bits_view(a.source)
    out = dst
    i, t = tirx.Var("i", "int32"), tirx.Var("t", "int32")
    index = [i * width + t]
    load = tirx.BufferLoad(src, operand_index(a, i, start + t, ta))
    body = tirx.BufferStore(out, load, index)
    if start + width > k:
        body = tirx.IfThenElse(start + t < k, body, tirx.BufferStore(out, tirx.const(0, str(out.ty.dtype)), index))
    serial = tirx.ForKind.SERIAL
    nest = loop(t, width, serial, loop(i, m, serial, body)) if ta else loop(i, m, serial, loop(t, width, serial,
                                                                                               body))
    return C.seq([*decls, nest])


def lower_gemm_amx(ctx: Any) -> Any:
    """Lower one ``tl.gemm`` to AMX micro tiles (see the module docstring)."""
    from tvm import tirx

    from tilelang.backend.sdk import gemm_operands, operand_index
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import PREFETCH, config
    from tilelang_cpu.gemm_prefetch import output_lines, output_tile, prefetch_line
    from tilelang_cpu.gemm_vnni_pack import VnniLayout, pack_per_call, pack_whole
    from tilelang_cpu.tileops.common import bits_dtype, bits_view, loop, pointer, row_stride, scratch

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    dtype, c_dtype = str(a.source.ty.dtype), str(c.source.ty.dtype)
    kind = _KINDS[(dtype, c_dtype)]
    m, n = (C.as_int(r.extent) for r in c.region[-2:])
    k = C.as_int(b.region[-1].extent if tb else b.region[-2].extent)
    kt, nb = kind.k_step, kind.in_bytes
    layout = VnniLayout(TILE_ROWS, kind.group, kt)
    packed = pack_whole(ctx, b, tb, k, layout) or pack_per_call(b, tb, k, n, layout)
    stmts = [*pre_a, *pre_b, *packed.stmts]

    lda = None if ta else row_stride(a.source)
    if lda is None:  # transposed A, or rows that are not contiguous: zero-padded rows of a copy
        k_pad = layout.k_pad(k)
        rows = scratch("A_rows", m * k_pad, bits_dtype(dtype))
        stmts += [tirx.AllocBuffer(rows), _rows_copy(a, ta, m, k, 0, k_pad, rows)]
        steps, tail = k_pad // kt, None

        def a_at(row: Any, kk: Any) -> tuple[Any, Any]:
            return pointer(rows, [row * k_pad + kk]), k_pad * nb
    else:
        steps, rest = divmod(k, kt)
        tail = None
        if rest:  # the last, partial step reads a zero-padded copy of A's last columns
            tail = scratch("A_tail", m * kt, bits_dtype(dtype))
            stmts += [tirx.AllocBuffer(tail), _rows_copy(a, False, m, k, steps * kt, kt, tail)]
        # addressed through its integer view: a bf16 tile only read by address would become fp32 storage in
        # TVM's bf16 legalization
        a_view, decls = bits_view(a.source)
        stmts += decls

        def a_at(row: Any, kk: Any) -> tuple[Any, Any]:
            return pointer(a_view, operand_index(a, row, kk, False)), _i64(lda) * nb

    def tail_at(row: Any, kk: Any) -> tuple[Any, Any]:
        return pointer(tail, [row * kt]), kt * nb

    ldc = row_stride(c.source)

    def c_at(row: Any, col: Any) -> tuple[Any, Any]:
        return pointer(c.source, operand_index(c, row, col, False)), _i64(ldc) * 4

    def b_at(col: Any, kk: Any) -> Any:
        buf, index = packed.at(col, kk)
        return pointer(buf, index)

    do_prefetch = bool(config(PREFETCH, True))

    def next_pair(col0: Any, it: Any, iters: int) -> list[Any]:
        """Prefetches of this iteration's share of the lines of the two B panels right of `col0` (the next
        column pair; past the call's last pair, the panels after it, which the next block reads)."""
        lines = 2 * (k // kind.group)
        per = min(_MAX_PREFETCH, -(-lines // iters))
        out = []
        for u in range(per):
            line = tirx.floormod(it * per + u, lines)
            panel = tirx.floordiv(line, k // kind.group)
            buf, index = packed.at(col0 + PAIR + panel * TILE_ROWS, tirx.floormod(line, k // kind.group) * kind.group)
            size = C.as_int(buf.ty.shape[0])
            out.append(prefetch_line(buf, [tirx.min(index[0], size - 1)]))
        return out

    def micro(row0: Any, col0: Any, rows: list[int], cols: list[int], fetch: Any = None) -> Any:
        """One micro tile of ``len(rows) x len(cols)`` C tiles at (row0, col0); `fetch(s)`: prefetches of step s."""
        nc = len(cols)
        ctiles = [(a_, b_, _C_TILES + a_ * nc + b_) for a_ in range(len(rows)) for b_ in range(nc)]
        init = []
        for a_, b_, t in ctiles:
            if clear:
                init.append(_intrin("tilezero", _tile(t)))
            else:
                ptr, ld = c_at(row0 + a_ * TILE_ROWS, col0 + b_ * TILE_ROWS)
                init.append(_intrin("tileloadd64", _tile(t), ptr, _i64(ld)))

        def step(kk: Any, at: Any) -> Any:
            ops = []
            for a_ in range(len(rows)):
                ptr, ld = at(row0 + a_ * TILE_ROWS, kk)
                ops.append(_intrin("tileloadd64", _tile(_A_TILES + a_), ptr, _i64(ld)))
                for b_ in range(nc):
                    if a_ == 0:
                        ops.append(_intrin("tileloadd64", _tile(_B_TILES + b_), b_at(col0 + b_ * TILE_ROWS, kk),
                                           _i64(ROW_BYTES)))
                    ops.append(_intrin(kind.intrinsic[len("llvm.x86."):], _tile(_C_TILES + a_ * nc + b_),
                                       _tile(_A_TILES + a_), _tile(_B_TILES + b_)))
            return C.seq(ops)

        s = tirx.Var("s", "int32")
        body = [*([] if fetch is None else fetch(s)), step(s * kt, a_at)]
        k_loop = [loop(s, steps, tirx.ForKind.SERIAL, C.seq(body))] if steps else []
        if tail is not None:
            k_loop.append(step(steps * kt, tail_at))
        store = []
        for a_, b_, t in ctiles:
            ptr, ld = c_at(row0 + a_ * TILE_ROWS, col0 + b_ * TILE_ROWS)
            store.append(_intrin("tilestored64", _tile(t), ptr, _i64(ld)))
        return C.seq([*init, *k_loop, *store])

    full_i, rest_i = _split(m)
    full_j, rest_j = _split(n)
    pair = [TILE_ROWS, TILE_ROWS]
    serial = tirx.ForKind.SERIAL
    ip, jp = tirx.Var("ip", "int32"), tirx.Var("jp", "int32")
    edge_i, edge_j = tirx.const(full_i * PAIR, "int32"), tirx.const(full_j * PAIR, "int32")
    groups = []  # (rows, cols, loop nest)
    if full_i and full_j:
        iters = full_i * (steps or 1)
        fetch = None
        if do_prefetch and steps:
            # the next column pair of B, and the lines of the tile the block's final copy writes C to (each a
            # read-for-ownership miss otherwise, taken after the gemm)
            dst = output_lines(ctx.func, c, clear)
            out = output_tile(dst, m, n, full_i * full_j, steps, 1) if dst is not None else None

            def fetch(s: Any) -> list[Any]:
                extra = [out(jp * full_i + ip, s)] if out is not None else []
                return [*next_pair(jp * PAIR, ip * steps + s, iters), *extra]
        groups.append((pair, pair, loop(jp, full_j, serial, loop(ip, full_i, serial,
                                                                 micro(ip * PAIR, jp * PAIR, pair, pair, fetch)))))
    if full_i and rest_j:
        groups.append((pair, rest_j, loop(ip, full_i, serial, micro(ip * PAIR, edge_j, pair, rest_j))))
    if rest_i and full_j:
        groups.append((rest_i, pair, loop(jp, full_j, serial, micro(edge_i, jp * PAIR, rest_i, pair))))
    if rest_i and rest_j:
        groups.append((rest_i, rest_j, micro(edge_i, edge_j, rest_i, rest_j)))
    for rows_, cols_, nest in groups:
        stmts += [*_load_config(rows_, cols_, 4), nest]
    stmts.append(_intrin("tilerelease"))
    return C.seq(stmts)


def uses_amx(mod: Any) -> bool:
    """Whether lowered module `mod` configures AMX tiles (its kernels need the process's AMX permission)."""
    import tvm
    from tvm import tirx
    from tvm.target import codegen

    from tilelang.transform import utils as C

    config_id = codegen.llvm_lookup_intrinsic_id("llvm.x86.ldtilecfg")

    def configures(call: Any) -> bool:
        return (isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_llvm_intrin"
                and C.as_int(call.args[0]) == config_id)

    return any(C.collect(func.body, tvm.ir.Call, configures) for func in mod.functions.values()
               if isinstance(func, tirx.PrimFunc))


AMX_GEMM = TileOpImpl("tl.gemm", "cpu_amx", lower_gemm_amx, applies=_applies, priority=4)
