"""Software prefetches interleaved with the CPU gemm micro-kernel (pass config ``tl.cpu.gemm_prefetch``).

The micro-kernel is bound by its FMAs and has load slots to spare; the memory it waits on is what it touches for
the first time: the next slice of B (rows of a tensor lie a page apart, beyond the hardware prefetchers' reach)
and the C tile that the block's final copy writes (each row on its own page, every line a read-for-ownership
miss). Each prefetcher maps (micro tile number, slot) to one 64-byte line so that the micro tiles of one gemm call
together touch every line of their target about once, at one prefetch (to L2) per ``every`` iterations of K:
few enough to leave the line fill buffers to the micro-kernel's own loads.

* `next_step_tile`: the ``K x n`` tile of B that the next step of the K loop reads (B packed per block);
* `next_panel_slice`: the slice of B's whole-tensor panels read after the current panel (`gemm_prepack`);
* `output_tile`: the destination region of the one ``T.copy(C_tile, C[...])`` that stores the accumulator, or
  the gemm's own global C when it clears it (`output_lines`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

LINE_BYTES = 64


class Prefetch(NamedTuple):
    """``fetch(tile, slot)``: the prefetch statement(s) for slot ``slot`` (one per ``every`` iterations of K) of
    micro tile number ``tile`` of the gemm call."""

    fetch: Any
    every: int


def slots_every(k: int, tiles: int, lines: int) -> int:
    """The largest power-of-two ``every`` dividing `k` with ``tiles * k / every >= lines`` (at least 1)."""
    every = 1
    while k % (every * 2) == 0 and tiles * k // (every * 2) >= lines:
        every *= 2
    return every


def prefetch_line(buf: Any, index: list[Any]) -> Any:
    """A prefetch of the line holding ``buf[index]`` into L2 (``prefetcht1`` on x86)."""
    from tvm import tirx

    address = tirx.call_intrin("handle", "tirx.address_of", tirx.BufferLoad(buf, index))
    return tirx.Evaluate(tirx.call_intrin("void", "tirx.prefetch", address, 0, 2, 1))


def _per_line(dtype: str) -> int:
    from tvm import DataType

    return max(1, LINE_BYTES * 8 // DataType(dtype).bits)


def next_step_tile(src: Any, trans: bool, k: int, n: int, tiles: int) -> Prefetch | None:
    """Lines of the next K step's ``K x n`` tile of operand region `src` (None when the region already reaches
    the end of B's K)."""
    from tvm import tirx

    from tilelang.backend.sdk import operand_index
    from tilelang.transform import utils as C

    kdim = -1 if trans else -2
    extent = C.as_int(src.source.ty.shape[kdim]) if len(src.source.ty.shape) >= 2 else None
    kmin = src.region[kdim].min
    if extent is None or (C.as_int(kmin) is not None and C.as_int(kmin) + 2 * k > extent):
        return None
    per_line = _per_line(str(src.source.ty.dtype))
    # the tile's source rows (`outer`) and the lines along each (`chunks`): the contiguous dimension is inner
    outer, inner = (n, k) if trans else (k, n)
    chunks = -(-inner // per_line)
    every = slots_every(k, tiles, outer * chunks)
    slots = k // every

    def fetch(tile: Any, slot: Any) -> Any:
        line = tile * slots + slot
        o = tirx.floormod(line, outer)
        c = tirx.floormod(tirx.floordiv(line, outer), chunks) if chunks > 1 else 0
        # logical op(B)[kk, j] of the next step: kk runs along the source rows' contiguous side when transposed
        kk_next, j = (c * per_line + k, o) if trans else (o + k, c * per_line)
        idx = operand_index(src, kk_next, j, trans)
        idx[kdim] = tirx.min(idx[kdim], extent - 1)  # the last step: stay inside the tensor
        return prefetch_line(src.source, idx)

    return Prefetch(fetch, every)


def next_panel_slice(packed: Any, nmin: Any, kmin: Any, k: int, nr: int, k_total: int, strips: int,
                     panels: int) -> Prefetch:
    """Lines of the ``k x nr`` slice of the whole-B panels (`packed`, flat, panel-major) read after the current
    one: the next panel of this call, or after its last panel the first one of the next K step; the `strips`
    micro tiles of a panel together cover the slice."""
    from tvm import tirx

    per_line = _per_line(str(packed.ty.dtype))
    lines = -(-k * nr // per_line)
    every = slots_every(k, strips, lines)
    slots = k // every
    size = int(packed.ty.shape[0])

    def fetch(tile: Any, slot: Any) -> Any:
        q, s = tirx.floordiv(tile, strips), tirx.floormod(tile, strips)
        last = q >= panels - 1
        panel = tirx.floordiv(nmin, nr) + tirx.Select(last, 0, q + 1)
        row = kmin + tirx.Select(last, k, 0)
        line = tirx.floormod(s * slots + slot, lines)
        return prefetch_line(packed, [tirx.min(panel * (k_total * nr) + row * nr + line * per_line, size - 1)])

    return Prefetch(fetch, every)


def output_destination(func: Any, acc: Any) -> Any | None:
    """The global region that the one ``T.copy(acc, X[...])`` of `func` stores the accumulator `acc` to, when
    its corner reads only launch variables (it is known wherever the gemm runs); else None."""
    from tvm import tirx

    from tilelang.ir import region_extents, to_region
    from tilelang.transform import utils as C

    if func is None:
        return None
    found = []
    for ev in C.collect(func.body, tirx.Evaluate):
        op = C.tile_op_of(ev)
        if op is None or op[0] != "tl.copy" or len(op[1].args) < 2:
            continue
        src = to_region(op[1].args[0])
        if src.source.same_as(acc):
            dst = to_region(op[1].args[1], region_extents(src))
            found.append(dst)
    if len(found) != 1 or C.scope_of(found[0].source) != "global" or len(found[0].region) < 2:
        return None
    inner = [lp.loop_var for lp in C.collect(func.body, tirx.For)] + [b.var for b in C.collect(func.body, tirx.Bind)]
    dst = found[0]
    if C.uses_var([r.min for r in dst.region], inner) or any(C.as_int(r.extent) is None for r in dst.region):
        return None
    return dst


def output_lines(func: Any, c: Any, clear: bool) -> Any | None:
    """The global region that a gemm into accumulator region `c` makes the block write for the first time: the
    destination of the accumulator's final copy (`output_destination`), or `c` itself when it is a global tensor
    that the gemm clears (an accumulator elided by `ElideTileCopies`: its micro tiles store to lines they never
    loaded); else None."""
    from tilelang.transform import utils as C

    if C.scope_of(c.source) != "global":
        return output_destination(func, c.source)
    return c if clear and all(C.as_int(r.extent) is not None for r in c.region[-2:]) else None


def output_tile(dst: Any, m: int, n: int, tiles: int, k: int, every: int) -> Any:
    """``fetch(tile, slot)`` for the lines of the ``m x n`` destination region `dst` of the accumulator, spread
    over the `tiles` micro tiles of the call at the given `every`; None when they would not cover it."""
    from tvm import tirx

    from tilelang.transform import utils as C

    per_line = _per_line(str(dst.source.ty.dtype))
    chunks = -(-n // per_line)
    lines = m * chunks
    slots = k // every
    if tiles * slots < lines:
        return None
    rmin, cmin = dst.region[-2].min, dst.region[-1].min
    shape = [C.as_int(s) for s in dst.source.ty.shape]

    def inside(index: list[Any]) -> list[Any]:
        """Each index clamped into the tensor (a tile past its edge is never copied out, nor fetched from)."""
        return [i if s is None else tirx.max(0, tirx.min(i, s - 1)) for i, s in zip(index, shape)]

    def fetch(tile: Any, slot: Any) -> Any:
        line = tirx.floormod(tile * slots + slot, lines)
        r, c = tirx.floordiv(line, chunks), tirx.floormod(line, chunks)
        col = tirx.min(cmin + c * per_line, cmin + (n - 1))
        return prefetch_line(dst.source, inside([*(lead.min for lead in dst.region[:-2]), rmin + r, col]))

    return fetch


def combine(first: Prefetch | None, extra: Any) -> Prefetch | None:
    """`first` with the statements of ``extra(tile, slot)`` (an `output_tile` fetch, or None) added."""
    from tilelang.transform import utils as C

    if first is None or extra is None:
        return first
    return Prefetch(lambda tile, slot: C.seq([first.fetch(tile, slot), extra(tile, slot)]), first.every)
