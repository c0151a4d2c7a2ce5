"""``tl.gemm`` on vector dot-product instructions (priority 3; llvm targets whose CPU features have one).

==========================  ========================  ================================================
A, B  ->  C                 instruction               LLVM feature of the target
==========================  ========================  ================================================
bfloat16 -> float32         ``vdpbf16ps`` (zmm)       ``avx512bf16``
int8 -> int32               ``vpdpbusd`` (zmm)        ``avx512vnni``
int8 -> int32               ``vpdpbssd`` (ymm)        ``avxvnniint8``
int8 -> int32               ``vpdpbusd`` (ymm)        ``avxvnni``
==========================  ========================  ================================================

Each instruction adds, per 32-bit lane of the accumulator, the dot product of `group` consecutive k (2 bf16 or 4
int8) of a row of A and of a column of B: A's group is broadcast from one 32-bit word, B comes from panels packed
in that layout (`tilelang_cpu.gemm_vnni_pack`, ``width`` = NR). The micro tile is the fp32 micro-kernel's
(`tilelang_cpu.gemm_plan.micro_shape`: 6 x 64 on AVX-512, 6 x 16 on 256-bit vectors), each step covering `group`
k instead of one::

    acc[MR][NR / lanes] <- 0 or C          (int8 with vpdpbusd: minus the bias's sums, below)
    for q in range(K / group):
        for i in unroll(MR):
            a = broadcast(A[i0 + i, q*g : q*g + g] as one 32-bit word)
            for v in unroll(NR / lanes):
                acc[i][v] = dot(acc[i][v], a, B_panel[q][v])    # vpdpbusd: dot(acc, B_panel[q][v], a)
    C <- acc

``vpdpbusd`` multiplies unsigned bytes by signed bytes, so one int8 operand is made unsigned by adding 128 (an
XOR of the sign bits):

* A's rows contiguous (not transposed; the usual case): B, in its pack, once. Its panel vectors are the unsigned
  operand, A's broadcast word the signed one (a broadcast load, nothing done to it per step). The bias adds
  ``128 * sum_k A[i, k]`` to row i; those row sums are computed once per gemm call (64-byte slices of A against
  all-ones bytes with the same instruction) and subtracted when the accumulators are loaded. Measured on Zen 4
  (with the K step of four times fp32's, `tilelang_cpu.gemm_plan.k_block`): 3-6 % over biasing A.
* else A, per step (``a ^ 0x80808080``, a register holding the constant), which adds ``128 * sum_k B[k, j]`` to
  column j; those column sums are computed per panel (A = all ones) and subtracted in the same place.

int8 micro tiles prefetch the lines of the block's output tile (`tilelang_cpu.gemm_prefetch.output_tile`, pass
config ``tl.cpu.gemm_prefetch``). A K that is not a multiple of the group ends with a partial word (zero bytes,
against B's zero padding). Columns past a multiple of the vector width go through a small stack row (no masked
loads in TVM's IR).

The choice follows the features, as everywhere: where a CPU issues ``vdpbf16ps`` at half the FMA rate (measured on
Emerald Rapids with AMX switched off) this path is slower than the fp32 micro-kernel, and ``mattr=["-avx512bf16"]``
(or the pass config ``tl.cpu.gemm_avx512_bf16=False``) selects that one.

LLVM 22 declares these intrinsics on ``<32 x bfloat>`` / ``<N x i8>`` operands, which TIR cannot carry to LLVM
(TVM's bf16 legalization widens every ``bfloat16`` value to fp32, and its LLVM codegen has no ``bfloat`` vector
type): the operands travel as ``int32`` vectors -- one lane per pair (quad) of k -- into a small LLVM function
that bitcasts them and calls the intrinsic (`shim`), linked into the kernel through TVM's
``pragma_import_llvm`` and inlined.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from tilelang.backend import TileOpImpl

__all__ = ["DOT_GEMM", "DotKind", "dot_kind", "shim"]


class DotKind(NamedTuple):
    """One vector dot-product instruction: LLVM intrinsic, accumulator lane dtype, 32-bit lanes per vector, k per
    lane, whether A is biased to unsigned (``vpdpbusd``), and the LLVM element type of its A / B operands."""

    intrinsic: str
    acc: str
    lanes: int
    group: int
    bias: bool
    operand: str

    @property
    def shim_name(self) -> str:
        return "tl_" + self.intrinsic[len("llvm.x86."):].replace(".", "_")


BF16_512 = DotKind("llvm.x86.avx512bf16.dpbf16ps.512", "float32", 16, 2, False, "bfloat")
VNNI_512 = DotKind("llvm.x86.avx512.vpdpbusd.512", "int32", 16, 4, True, "i8")
VNNI_INT8_256 = DotKind("llvm.x86.avx2.vpdpbssd.256", "int32", 8, 4, False, "i8")
VNNI_256 = DotKind("llvm.x86.avx512.vpdpbusd.256", "int32", 8, 4, True, "i8")


def shim(kind: DotKind) -> str:
    """LLVM IR of ``<acc> @<shim_name>(<acc> %acc, <lanes x i32> %a, <lanes x i32> %b)``: the operands bitcast to
    the intrinsic's types, then the intrinsic (``linkonce_odr``: every gemm of a module may import it)."""
    acc = f"<{kind.lanes} x {'float' if kind.acc == 'float32' else 'i32'}>"
    words = f"<{kind.lanes} x i32>"
    typed = f"<{kind.lanes * kind.group} x {kind.operand}>"
    return (f"define linkonce_odr {acc} @{kind.shim_name}({acc} %acc, {words} %a, {words} %b) alwaysinline {{\n"
            f"  %x = bitcast {words} %a to {typed}\n"
            f"  %y = bitcast {words} %b to {typed}\n"
            f"  %r = call {acc} @{kind.intrinsic}({acc} %acc, {typed} %x, {typed} %y)\n"
            f"  ret {acc} %r\n}}\n"
            f"declare {acc} @{kind.intrinsic}({acc}, {typed}, {typed})\n")


def dot_kind(target: Any, a_dtype: str, b_dtype: str, c_dtype: str) -> DotKind | None:
    """The instruction for a gemm with these dtypes on `target` (the widest it has), or None."""
    from tilelang.backend.sdk import kind_of
    from tilelang_cpu.isa import dot_units

    if a_dtype != b_dtype or str(kind_of(target)) != "llvm":
        return None
    units = dot_units(target)
    if (a_dtype, c_dtype) == ("bfloat16", "float32"):  # tl.cpu.gemm_avx512_bf16=False opts out
        from tilelang_cpu.gemm_plan import AVX512_BF16, config

        return BF16_512 if units.avx512_bf16 and config(AVX512_BF16, True) else None
    if (a_dtype, c_dtype) == ("int8", "int32"):
        if units.vnni == 512:
            return VNNI_512
        if units.vnni_int8:
            return VNNI_INT8_256
        return VNNI_256 if units.vnni == 256 else None
    return None


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
    return dot_kind(ctx.target, a, b, c) is not None and row_stride(regions[2].source) is not None


def _register(kind: DotKind, name: str) -> Any:
    """A one-vector buffer for an accumulator (or a column-sum or stack row), in ``local`` scope and of scalar
    lanes read as a whole through a ramp. TVM's StorageRewrite hands a freed ``global`` buffer of any dtype (a row
    reduction's partial sums, say) to a later ``global`` allocation of a fitting size, and then rejects a
    ``float32x16`` element read with a scalar index on the merged fp32 buffer; ``local`` buffers are never merged
    (LLVM keeps them in registers)."""
    from tvm import tirx

    return tirx.decl_buffer([kind.lanes], kind.acc, name=name, scope="local")


def _all(lanes: int) -> list[Any]:
    from tvm import tirx

    return [tirx.Ramp(tirx.const(0, "int32"), 1, lanes)]


def _whole(buf: Any) -> Any:
    from tvm import tirx

    return tirx.BufferLoad(buf, _all(int(buf.shape[0])))


def _call(kind: DotKind, acc: Any, a: Any, b: Any) -> Any:
    from tvm import tirx

    return tirx.call_pure_extern(f"{kind.acc}x{kind.lanes}", kind.shim_name, acc, a, b)


def lower_gemm_dot(ctx: Any) -> Any:
    """Lower one ``tl.gemm`` to dot-product micro tiles (see the module docstring)."""
    import tvm
    from tvm import tirx

    from tilelang.backend.sdk import gemm_operands, operand_index
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import PREFETCH, config, micro_shape
    from tilelang_cpu.gemm_prefetch import Prefetch, output_lines, output_tile, slots_every
    from tilelang_cpu.gemm_vnni_pack import VnniLayout, pack_per_call, pack_whole
    from tilelang_cpu.isa import vector_isa
    from tilelang_cpu.tileops.common import bits_view, loop, row_stride, scratch

    a, b, c, ta, tb, clear = gemm_operands(ctx)
    pre_a, a = ctx.staged(a)
    pre_b, b = ctx.staged(b)
    kind = dot_kind(ctx.target, str(a.source.ty.dtype), str(b.source.ty.dtype), str(c.source.ty.dtype))
    m, n = (C.as_int(r.extent) for r in c.region[-2:])
    k = C.as_int(b.region[-1].extent if tb else b.region[-2].extent)
    g, lanes = kind.group, kind.lanes
    # vpdpbusd with A's rows contiguous: B is the unsigned operand (biased in its pack), A the signed one (see
    # the module docstring); else A is biased per step, a register holding the XOR constant
    swap = kind.bias and not ta and row_stride(a.source) is not None
    regs = vector_isa(ctx.target).registers - (1 if kind.bias and not swap else 0)
    shape = micro_shape(m, n, lanes, regs)
    mr, nr = min(shape.mr, m), shape.nr
    layout = VnniLayout(nr, g, g)
    packed = pack_whole(ctx, b, tb, k, layout, swap) or pack_per_call(b, tb, k, n, layout, swap)
    words = tirx.decl_buffer([C.as_int(packed.buffer.ty.shape[0]) // g], "int32", name=f"{packed.buffer.name}_words")
    a_bits, a_decls = bits_view(a.source)
    stmts = [*pre_a, *pre_b, *packed.stmts, tirx.DeclBuffer(words, data=packed.buffer.data), *a_decls]
    in_bits = 32 // g
    groups, rest = divmod(k, g)

    def a_word(row: Any, q: Any, count: int) -> Any:
        """The `count` elements of A's row from k ``q * g`` as one 32-bit word (lowest k in the lowest bits)."""
        word = None
        for e in range(count):
            raw = tirx.BufferLoad(a_bits, operand_index(a, row, q * g + e, ta))
            part = tirx.Cast("uint32", tirx.Cast(f"uint{in_bits}", raw) if in_bits == 8 else raw)
            part = part if e == 0 else tirx.shift_left(part, tirx.const(e * in_bits, "uint32"))
            word = part if word is None else tirx.bitwise_or(word, part)
        if kind.bias and not swap:
            word = tirx.bitwise_xor(word, tirx.const(0x80808080, "uint32"))
        return tirx.Broadcast(tirx.reinterpret("int32", word), lanes)

    def b_vec(col0: Any, q: Any, v: int) -> Any:
        _, index = packed.at(col0, q * g)
        return tirx.BufferLoad(words, [tirx.Ramp(tirx.floordiv(index[0], g) + v * lanes, 1, lanes)])

    def c_index(row: Any, col: Any) -> list[Any]:
        return operand_index(c, row, col, False)

    def c_vector(row: Any, col: Any) -> list[Any]:
        """The index of `lanes` columns of C from `col`: one ramp from the scalar index (a ramp added to C's
        corner would be a vector sum, whose bounds the safe-memory pass checks lane by lane)."""
        index = c_index(row, col)
        return [*index[:-1], tirx.Ramp(index[-1], 1, lanes)]

    serial = tirx.ForKind.SERIAL

    def micro(i0: Any, col0: Any, rows: int, width: int, sums: list[Any] | None, row_sums: Any = None,
              tile: Any = None) -> Any:
        nv = -(-width // lanes)
        accs = [[_register(kind, f"acc{r}_{v}") for v in range(nv)] for r in range(rows)]
        row_tmp = _register(kind, "c_row")
        init, store = [], []
        for r in range(rows):
            for v in range(nv):
                col, valid = col0 + v * lanes, min(lanes, width - v * lanes)
                if clear:
                    value = tirx.Broadcast(tirx.const(0, kind.acc), lanes)
                elif valid == lanes:
                    value = tirx.BufferLoad(c.source, c_vector(i0 + r, col))
                else:  # a partial vector: through a stack row
                    t = tirx.Var("t", "int32")
                    init.append(loop(t, lanes, serial, tirx.BufferStore(row_tmp, tirx.if_then_else(
                        t < valid, tirx.BufferLoad(c.source, c_index(i0 + r, col + t)), tirx.const(0, kind.acc)),
                        [t])))
                    value = _whole(row_tmp)
                if sums is not None:
                    value = value - tirx.shift_left(_whole(sums[v]), tirx.Broadcast(
                        tirx.const(7, "int32"), lanes))
                if row_sums is not None:
                    value = value - tirx.Broadcast(tirx.BufferLoad(row_sums, [i0 + r]), lanes)
                init.append(tirx.BufferStore(accs[r][v], value, _all(lanes)))
                if valid == lanes:
                    store.append(tirx.BufferStore(c.source, _whole(accs[r][v]),
                                                  c_vector(i0 + r, col)))
                else:
                    t = tirx.Var("t", "int32")
                    store += [tirx.BufferStore(row_tmp, _whole(accs[r][v]), _all(lanes)),
                              loop(t, valid, serial, tirx.BufferStore(c.source, tirx.BufferLoad(row_tmp, [t]),
                                                                       c_index(i0 + r, col + t)))]

        def step(q: Any, count: int) -> Any:
            ops = []
            for r in range(rows):
                word = a_word(i0 + r, q, count)
                for v in range(nv):
                    x, y = (b_vec(col0, q, v), word) if swap else (word, b_vec(col0, q, v))
                    ops.append(tirx.BufferStore(accs[r][v], _call(kind, _whole(accs[r][v]), x, y), _all(lanes)))
            return C.seq(ops)

        q = tirx.Var("q", "int32")
        if groups and fetch is not None:  # one prefetch slot per `every` steps
            qo, qi = tirx.Var("qo", "int32"), tirx.Var("qi", "int32")
            inner = loop(qi, fetch.every, serial, C.substitute(step(q, g), {q: qo * fetch.every + qi}))
            k_loop = [loop(qo, groups // fetch.every, serial, C.seq([fetch.fetch(tile, qo), inner]))]
        else:
            k_loop = [loop(q, groups, serial, step(q, g))] if groups else []
        if rest:
            k_loop.append(step(tirx.const(groups, "int32"), rest))
        allocs = [tirx.AllocBuffer(x) for row in accs for x in row] + [tirx.AllocBuffer(row_tmp)]
        return C.seq([*allocs, *init, *k_loop, *store])

    def column_sums(col0: Any, width: int) -> tuple[list[Any], Any]:
        """Buffers holding 128-free column sums of the panel at `col0` (one int32 vector per B vector)."""
        nv = -(-width // lanes)
        sums = [_register(kind, f"colsum{v}") for v in range(nv)]
        ones = tirx.Broadcast(tirx.const(0x01010101, "int32"), lanes)
        q = tirx.Var("q", "int32")
        body = [tirx.BufferStore(s, _call(kind, _whole(s), ones, b_vec(col0, q, v)), _all(lanes))
                for v, s in enumerate(sums)]
        zero = [tirx.BufferStore(s, tirx.Broadcast(tirx.const(0, "int32"), lanes), _all(lanes)) for s in sums]
        k_pad = layout.k_pad(k)
        # vpdpbusd treats the ones as unsigned and B as signed: exact sums of B's bytes
        return sums, C.seq([*(tirx.AllocBuffer(s) for s in sums), *zero,
                            loop(q, k_pad // g, serial, C.seq(body))])

    def a_row_sums() -> tuple[Any, list[Any]]:
        """A buffer of ``128 * sum_k A[i, k]`` for each row i of the call (what B's bias adds to row i of C), and
        the statements that fill it: per row, 64-byte slices of A against all-ones bytes, then the lanes summed."""
        out = scratch("A_row_sums", m, "int32")
        vec, total = _register(kind, "a_sum"), tirx.decl_buffer([1], "int32", name="a_total", scope="local")
        row, q, t, e = (tirx.Var(x, "int32") for x in ("r", "q", "t", "e"))
        chunk = lanes * g
        full, tail = divmod(k, chunk)
        ones = tirx.Broadcast(tirx.const(0x01010101, "int32"), lanes)

        def at(kk: Any, count: int = 1) -> list[Any]:
            index = operand_index(a, row, kk, False)
            return index if count == 1 else [*index[:-1], tirx.Ramp(index[-1], 1, count)]

        body = [tirx.BufferStore(vec, tirx.Broadcast(tirx.const(0, "int32"), lanes), _all(lanes)),
                tirx.BufferStore(total, tirx.const(0, "int32"), [0])]
        if full:
            slice_ = tirx.reinterpret(f"int32x{lanes}", tirx.BufferLoad(a_bits, at(q * chunk, chunk)))
            body.append(loop(q, full, serial, tirx.BufferStore(vec, _call(kind, _whole(vec), ones, slice_),
                                                               _all(lanes))))
        add = tirx.BufferLoad(total, [0]) + tirx.BufferLoad(vec, [t])
        body.append(loop(t, lanes, serial, tirx.BufferStore(total, add, [0])))
        if tail:
            add = tirx.BufferLoad(total, [0]) + tirx.Cast("int32", tirx.BufferLoad(a_bits, at(full * chunk + e)))
            body.append(loop(e, tail, serial, tirx.BufferStore(total, add, [0])))
        body.append(tirx.BufferStore(out, tirx.shift_left(tirx.BufferLoad(total, [0]), tirx.const(7, "int32")),
                                     [row]))
        return out, [tirx.AllocBuffer(out), loop(row, m, serial, C.seq([tirx.AllocBuffer(vec),
                                                                        tirx.AllocBuffer(total), *body]))]

    row_sums = None
    if swap:
        row_sums, fill = a_row_sums()
        stmts += fill

    full_m, tail_m = divmod(m, mr)
    full_n, tail_n = divmod(n, nr)
    i0, j0 = tirx.Var("i0", "int32"), tirx.Var("j0", "int32")
    strips = full_m + (1 if tail_m else 0)
    fetch = None
    if kind.acc == "int32" and groups and config(PREFETCH, True):
        # the lines of the block's output tile, prefetched while the micro tiles run (each line's first
        # write is a read-for-ownership miss of the accumulator's final copy), one per `every` steps; int8
        # only: measured on Zen 4, +1.4 % at 1024^3 with vpdpbusd, -1 % (noise level) with vdpbf16ps. A global
        # C cleared by this call (the accumulator elided by `ElideTileCopies`) is that tile itself
        dst = output_lines(ctx.func, c, clear)
        if dst is not None:
            tiles = strips * (full_n + (1 if tail_n else 0))
            lines = m * -(-n // max(1, 512 // tvm.DataType(str(dst.source.ty.dtype)).bits))
            every = slots_every(groups, tiles, lines)
            out = output_tile(dst, m, n, tiles, groups, every)
            fetch = Prefetch(out, every) if out is not None else None

    def panel(col0: Any, width: int, panel_no: Any) -> Any:
        body = []
        sums = None
        if kind.bias and not swap:
            sums, make = column_sums(col0, width)
            body.append(make)
        if full_m:
            body.append(loop(i0, full_m, serial, micro(i0 * mr, col0, mr, width, sums, row_sums,
                                                       panel_no * strips + i0)))
        if tail_m:
            body.append(micro(tirx.const(full_m * mr, "int32"), col0, tail_m, width, sums, row_sums,
                              panel_no * strips + full_m))
        return C.seq(body)

    if full_n:
        stmts.append(loop(j0, full_n, serial, panel(j0 * nr, nr, j0)))
    if tail_n:
        stmts.append(panel(tirx.const(full_n * nr, "int32"), tail_n, tirx.const(full_n, "int32")))
    return tirx.AttrStmt(tirx.const(0, "int32"), "pragma_import_llvm", tvm.ir.StringImm(shim(kind)), C.seq(stmts))


DOT_GEMM = TileOpImpl("tl.gemm", "cpu_dot_product", lower_gemm_dot, applies=_applies, priority=3)
