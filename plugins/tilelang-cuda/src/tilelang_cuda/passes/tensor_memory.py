"""TensorMemory: Blackwell tensor-memory tiles (``T.alloc_tmem``) become columns of TMEM owned by the kernel.

A TMEM tile ``[.., M, N]`` of 32-bit values (M = 128 datapaths, one column per element, leading modes one
after another along the columns) or of 16-bit values (``float16`` / ``bfloat16``: two elements a 32-bit column,
the even one in the low half -- the A operand of a TS ``tcgen05.mma``, read K-major along the columns) gets
``ncols`` columns (the next power of two >= 32 of its column count):

- right after its allocation, warp 0 runs ``tcgen05.alloc`` (the base address lands in a one-word shared slot,
  annotated on the tile's AllocBuffer as ``tl.cuda.tmem_slot``) and a block barrier publishes it; after the
  kernel's last tile it relinquishes the allocation permit (no ``tcgen05.alloc`` may follow that);
- in a kernel with MMAs of a CTA pair (``use_2cta``) both CTAs allocate and release the same columns together
  (``cta_group::2``), the release behind a cluster barrier;
- at the end of the allocating block (unless the kernel calls ``T.deallocate_tmem`` on it) the block
  synchronises and warp 0 runs ``tcgen05.dealloc``;
- a ``T.annotate_layout`` on the tile is checked to be the layout stored here (row ``i`` on datapath ``i``, as
  ``T.make_blockscaled_gemm_layout`` gives for M = 128) and dropped;
- a fragment that `tilelang_cuda.passes.tmem_fragments` (before this pass) kept one row per thread is copied
  straight between TMEM and its registers; for any other fragment ``T.copy(tmem, fragment)`` becomes
  ``T.copy(tmem, shared scratch)`` + ``T.copy(scratch, fragment)``: each thread of a warpgroup reads its own
  datapath (``tcgen05.ld``), and core distributes the scratch tile over the fragment's threads;
  ``T.copy(fragment, tmem)`` goes the other way (``tcgen05.st``).

`TensorMemory` runs at ``pre_layout``; `DropTensorMemoryTiles` (``post_tile_lowering``) removes the tiles'
allocations once every use is an address computed from the slot (`tilelang_cuda.tileops.tmem_copy`,
`tilelang_cuda.tileops.dialect.tensorcore`).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

TMEM_SCOPE = "shared.tmem"
SLOT_ANN = "tl.cuda.tmem_slot"
COLS_ANN = "tl.cuda.tmem_cols"
TMEM_COLUMNS = 512
DATAPATHS = 128


def _call(name: str, *args: Any) -> Any:
    return tirx.Evaluate(tirx.call_extern("void", name, *args))


def _sync() -> Any:
    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))


TMEM_DTYPES = {"float32": 1, "int32": 1, "uint32": 1, "float16": 2, "bfloat16": 2}  # elements a 32-bit column


def per_column(buf: Any) -> int:
    """How many of TMEM tile `buf`'s elements share one 32-bit column (1, or 2 for 16-bit values)."""
    return TMEM_DTYPES.get(str(buf.ty.dtype), 1)


def tmem_columns(buf: Any) -> int:
    """The columns a TMEM tile occupies (M rows on the datapaths, 16-bit values packed two a column)."""
    shape = [C.as_int(s) for s in buf.ty.shape]
    cols = shape[-1]
    for d in shape[:-2]:
        cols *= d
    return cols // per_column(buf)


def _allocated_columns(cols: int) -> int:
    n = 32
    while n < cols:
        n *= 2
    return n


def _check(func: Any, buf: Any) -> int:
    shape = [C.as_int(s) for s in buf.ty.shape]
    dtype = str(buf.ty.dtype)
    if None in shape or len(shape) < 2:
        raise C.lowering_error(func, f"TMEM tile {buf.name}: needs a static shape of at least two modes, got "
                                     f"{list(buf.ty.shape)}")
    if shape[-2] != DATAPATHS:
        raise C.lowering_error(func, f"TMEM tile {buf.name}: the tilelang-cuda backend places M = {DATAPATHS} rows "
                                     f"on the datapaths (tcgen05.mma M=128); got M = {shape[-2]}")
    if dtype not in TMEM_DTYPES:
        raise C.lowering_error(func, f"TMEM tile {buf.name}: 32-bit values (float32, int32, uint32) or 16-bit ones "
                                     f"packed two a column (float16, bfloat16) are supported here, got {dtype}")
    if shape[-1] % TMEM_DTYPES[dtype]:
        raise C.lowering_error(func, f"TMEM tile {buf.name}: {dtype} values are packed two a 32-bit column; the last "
                                     f"mode ({shape[-1]}) must be even")
    cols = _allocated_columns(tmem_columns(buf))
    if cols > TMEM_COLUMNS:
        raise C.lowering_error(func, f"TMEM tile {buf.name} of shape {shape} needs {tmem_columns(buf)} columns; "
                                     f"tensor memory has {TMEM_COLUMNS}")
    return cols


def _consume_layout(func: Any, buf: Any, ann: dict[Any, Any]) -> dict[Any, Any]:
    """`ann` without the tile's ``T.annotate_layout`` entry, after checking that the layout is the one this
    backend stores: row ``i`` on datapath ``i``, column ``j`` (leading modes continuing along the columns)."""
    from tilelang.backend.sdk import LAYOUT_ANN
    from tilelang.backend.sdk import rebuild_layout as rebuild
    from tilelang.layout import Layout

    value = next((v for k, v in ann.items() if str(k) == LAYOUT_ANN), None)
    if value is None:
        return ann
    shape = [C.as_int(s) for s in buf.ty.shape]

    def stored(*idx: Any) -> list[Any]:
        lead = 0
        for extent, i in zip(shape[:-2], idx[:-2]):
            lead = lead * extent + i
        return [idx[-2], lead * shape[-1] + idx[-1]]

    given = rebuild(buf, value)
    if not given.is_equal(Layout(shape, stored)):
        raise C.lowering_error(func, f"T.annotate_layout: TMEM tile {buf.name} is annotated with {given!r}; the "
                                     f"tilelang-cuda backend stores row i on datapath i and column j in column j "
                                     f"(the M=128 accumulator of T.make_blockscaled_gemm_layout)")
    return {k: v for k, v in ann.items() if str(k) != LAYOUT_ANN}


def _is_tmem(x: Any) -> bool:
    return isinstance(x, tvm.ir.TensorRegion) and C.scope_of(x.source) == TMEM_SCOPE


def TensorMemory(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.tensor_memory")
    def tensor_memory(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tmem = [a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == TMEM_SCOPE]
        if not tmem:
            return func
        if target is not None:
            from tilelang_cuda.tileops.dialect.requirements import TCGEN05, missing

            lacking = missing(target, TCGEN05)
            if lacking is not None:
                raise C.lowering_error(func, "T.alloc_tmem on target 'cuda': " + "; ".join(lacking))
        ext = C.launch_extents(func)
        tx = ext["threadIdx.x"][0] if "threadIdx.x" in ext else tirx.IntImm("int32", 0)
        explicit = set()
        for call in C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                              and c.op.name == "tl.deallocate_tmem"):
            explicit.add(call.args[0].source)
        plans = {buf: (_check(func, buf), tirx.decl_buffer((1,), "uint32", name=f"{buf.name}_base",
                                                           scope="shared")) for buf in tmem}
        from tilelang_cuda.tileops.dialect.tensorcore import uses_2cta

        pair = uses_2cta(func)  # MMAs of a CTA pair: both CTAs allocate (and release) the same columns together
        suffix = "_2cta" if pair else ""
        release_sync = _call("tl_cluster_sync") if pair else _sync()

        def on_seq(seq: Any, m: Any) -> Any:
            parts = [m.mutate(p) for p in seq.seq]
            out, tail = [], []
            for part in parts:
                if isinstance(part, tirx.AllocBuffer) and part.buffer in plans:
                    buf = part.buffer
                    cols, slot = plans[buf]
                    ann = _consume_layout(func, buf, dict(part.annotations or {}))
                    ann[SLOT_ANN] = slot
                    ann[COLS_ANN] = tirx.IntImm("int32", cols)
                    slot_addr = tirx.address_of(tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)]))
                    allocate = _call("tl_tmem_alloc" + suffix, slot_addr, cols)
                    if buf.same_as(tmem[-1]):  # no tcgen05.alloc may follow the relinquish
                        allocate = C.seq([allocate, _call("tl_tmem_relinquish" + suffix)])
                    alloc = tirx.IfThenElse(tirx.floordiv(tx, 32) == 0, allocate, None)
                    out += [tirx.AllocBuffer(buf, ann), tirx.AllocBuffer(slot), alloc,
                            _call("tl_tcgen05_before_thread_sync"), _sync(), _call("tl_tcgen05_after_thread_sync")]
                    if buf not in explicit:
                        base = tirx.BufferLoad(slot, [tirx.IntImm("int32", 0)])
                        tail = [_call("tl_tcgen05_before_thread_sync"), release_sync,
                                tirx.IfThenElse(tirx.floordiv(tx, 32) == 0,
                                                _call("tl_tmem_dealloc" + suffix, base, cols), None), *tail]
                    continue
                out.append(part)
            return C.seq([*out, *tail]) if tail or len(out) != len(parts) else C.seq(out)

        def on_eval(ev: Any, m: Any) -> Any:
            found = C.tile_op_of(ev)
            if found is None or found[0] != "tl.copy":
                return ev
            call = found[1]
            src, dst = call.args[0], call.args[1]
            into = _is_tmem(dst) and not _is_tmem(src)
            if into and C.scope_of(src.source) not in ("local.fragment", "local", "shared", "shared.dyn"):
                raise C.lowering_error(func, f"T.copy into TMEM tile {dst.source.name}: the source must be a "
                                             f"fragment or a shared tile (tcgen05.st from registers), got "
                                             f"{C.scope_of(src.source)} {src.source.name}")
            tmem, other = (dst, src) if into else (src, dst)
            if not (_is_tmem(tmem) and C.scope_of(other.source) == "local.fragment"):
                return ev
            # through a shared tile of the TMEM tile's dtype, which core distributes over the fragment's threads
            extents = [r.extent for r in tmem.region]
            shape = [e for e in extents if not C.is_const(e, 1)]
            scratch = tirx.decl_buffer(shape, str(tmem.source.ty.dtype), name=f"{tmem.source.name}_stage",
                                       scope="shared.dyn")
            full = tirx.BufferRegion(scratch, [tvm.ir.Range.from_min_extent(0, e) for e in shape])
            steps = [(src, full), (full, dst)]
            copies = [tirx.Evaluate(tvm.ir.Call(call.op, [s, d, *call.args[2:]], ret_ty=call.ty)) for s, d in steps]
            return C.seq([tirx.AllocBuffer(scratch), *copies])

        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, on_seq), (tirx.Evaluate, on_eval)])
        return C.with_body(func, body)

    return tensor_memory


def DropTensorMemoryTiles(target: Any = None) -> tvm.transform.Pass:
    """Remove the TMEM tiles' allocations (every use is a TMEM address by now); a use left is an error."""

    @C.prim_func_pass("cuda.drop_tensor_memory_tiles")
    def drop(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tmem = [a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == TMEM_SCOPE]
        if not tmem:
            return func
        for buf in tmem:
            uses = len(C.collect(func.body, tvm.ir.Var, lambda v, b=buf: v.same_as(b)))
            if uses > 1:  # the allocation itself
                raise C.lowering_error(func, f"TMEM tile {buf.name} is used in a way the tilelang-cuda backend does "
                                             "not lower (tcgen05_gemm operands and T.copy into and out of TMEM are)")

        def on_alloc(a: Any, m: Any) -> Any:
            if C.scope_of(a.buffer) == TMEM_SCOPE:
                return tirx.Evaluate(tirx.IntImm("int32", 0))
            return m.default_mutate(a)

        return C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.AllocBuffer, on_alloc)]))

    return drop


def slot_of(func: Any, buf: Any) -> tuple[Any, int]:
    """``(base-address slot, allocated columns)`` of TMEM tile `buf` (planned by `TensorMemory`)."""
    for a in C.allocations(func.body):
        if a.buffer.same_as(buf):
            slot = a.annotations.get(SLOT_ANN)
            if slot is None:
                break
            return slot, int(a.annotations[COLS_ANN])
    raise C.lowering_error(func, f"TMEM tile {buf.name} has no tensor-memory allocation (internal: TensorMemory "
                                 "did not run)")
