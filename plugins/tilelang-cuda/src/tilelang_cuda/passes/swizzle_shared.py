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
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import _common as C
from tilelang.transform.plan_shared_memory import dtype_bytes

_SHARED = ("shared", "shared.dyn")
CHUNK_BYTES = 16


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


def _candidates(body: Any) -> set[Any]:
    """Shared buffers allocated in `body` that an ``ldmatrix`` reads."""
    allocated = {a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) in _SHARED}
    found: set[Any] = set()

    def on_call(call: Any) -> None:
        if (_call_name(call) or "").startswith("extern:tl_ldmatrix"):
            for ld in C.collect(call, tvm.ir.TensorLoad):
                if ld.source in allocated:
                    found.add(ld.source)

    C.walk(body, [(tvm.ir.Call, on_call)])
    return found


def _rewritable(body: Any, buf: Any, params: tuple[int, int, int], analyzer: Any) -> bool:
    """Whether every use of `buf` in `body` is a load, a store, its allocation or a one-chunk access pointer,
    and no access already XORs its indices (a layout the user annotated, which core applied)."""
    total = len(C.collect(body, tvm.ir.Var, lambda v: v.same_as(buf)))
    loads = C.collect(body, tvm.ir.TensorLoad, lambda ld: ld.source.same_as(buf))
    stores = C.collect(body, tirx.BufferStore, lambda st: st.buffer.same_as(buf))
    if any(C.collect(list(x.indices), tirx.BitwiseXor) for x in [*loads, *stores]):
        return False
    handled = len(loads) + len(stores)
    handled += len(C.collect(body, tirx.AllocBuffer, lambda a: a.buffer.same_as(buf)))
    vec = params[0]
    for call in C.collect(body, tvm.ir.Call, lambda c: _call_name(c) == "tirx.tvm_access_ptr"):
        data = call.args[1]
        if not (_call_name(data) == "tirx.buffer_data" and data.args[0].same_as(buf)):
            continue
        extent = C.as_int(call.args[3])
        if extent is None or extent > vec or not analyzer.can_prove(tirx.floormod(call.args[2], vec) == 0):
            return False
        handled += 1
    return total == handled


def _rewrite(body: Any, bufs: dict[Any, tuple[int, int, int]]) -> Any:
    def indices(buf: Any, idx: list[Any]) -> list[Any]:
        *lead, r, c = idx
        return [*lead, r, _swizzle_col(r, c, bufs[buf])]

    def on_load(ld: Any, m: Any) -> Any:
        idx = [m.mutate(i) for i in ld.indices]
        if ld.source in bufs:
            return tirx.BufferLoad(ld.source, indices(ld.source, idx))
        return tirx.BufferLoad(ld.source, idx)

    def on_store(st: Any, m: Any) -> Any:
        idx = [m.mutate(i) for i in st.indices]
        value = m.mutate(st.value)
        if st.buffer in bufs:
            return tirx.BufferStore(st.buffer, value, indices(st.buffer, idx))
        return tirx.BufferStore(st.buffer, value, idx)

    def on_call(call: Any, m: Any) -> Any:
        if _call_name(call) == "tirx.tvm_access_ptr":
            data = call.args[1]
            if _call_name(data) == "tirx.buffer_data" and data.args[0] in bufs:
                buf = data.args[0]
                cols = C.as_int(buf.ty.shape[-1])
                offset = m.mutate(call.args[2])
                row, col = tirx.floordiv(offset, cols), tirx.floormod(offset, cols)
                new = row * cols + _swizzle_col(row, col, bufs[buf])
                args = list(call.args)
                args[2] = new
                return tirx.call_intrin("handle", "tirx.tvm_access_ptr", *args)
        return m.default_mutate(call)

    return tvm_ffi.structural_mutate(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                            (tvm.ir.Call, on_call)])


def SwizzleSharedOperands(target: Any = None) -> tvm.transform.Pass:
    """Swizzle the shared tiles ``ldmatrix`` reads (see the module docstring)."""

    @C.prim_func_pass("tl.cuda.SwizzleSharedOperands")
    def swizzle(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))
        chosen = {}
        for buf in _candidates(func.body):
            params = swizzle_params(list(buf.ty.shape), str(buf.ty.dtype))
            if params is not None and _rewritable(func.body, buf, params, analyzer):
                chosen[buf] = params
        if not chosen:
            return func
        return C.with_body(func, _rewrite(func.body, chosen))

    return swizzle
