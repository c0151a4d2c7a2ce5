"""``metal.pack_half_vectors`` (`PackHalfVectors`): move 16-bit vectors as packed ``uint`` vectors.

TVM's Metal codegen spells a ``bfloat16xN`` vector as plain ``bfloat`` (dropping the lanes: the kernel would
read and write one element per vector) and a ``float16x8`` vector as ``half8``, which MSL does not have. A
vectorized copy of 16-bit elements needs neither: it moves bits. This pass (run after vectorization and storage
planning) rewrites every store of a 16-bit vector load of the same dtype and lanes, ``dst[ramp(d, 1, L)] =
src[ramp(s, 1, L)]`` with ``L`` even and ``d``, ``s`` provably multiples of ``L`` (the packed vector's
alignment), into the same copy through ``uint32`` views
of both buffers (``L / 2`` lanes: ``uint``, ``uint2``, ``uint4``). The MSL becomes
``*(threadgroup uint4*)(((threadgroup uint*)A_shared) + i) = *(device uint4*)(((device uint*)A) + j)``.

A copy that it cannot pack (an offset not provably aligned, or a strided side) becomes a serial loop of element
copies. A register or tile whose element type is itself a 16-bit vector (storage planning makes them) is re-declared
as ``uint32`` vectors when every access of it is a packable copy; when a copy of it cannot be packed, it is first
re-declared as a plain 16-bit array (its element ``i`` the ``L`` lanes from ``i * L``), so that copy can go element
by element (a ``float16x8`` element would print as ``half8``, which MSL does not have); used otherwise, it keeps its
type. `tilelang_metal.passes.limit_vector_width` keeps other 16-bit vector code within what the codegen spells.
"""

from __future__ import annotations

from typing import Any

import tvm

HALF_DTYPES = ("float16", "bfloat16")


def _half_lanes(dtype: Any) -> int | None:
    """The lane count of a 16-bit float vector dtype with an even number of lanes, else None."""
    dt = tvm.DataType(str(dtype))
    if dt.bits != 16 or int(dt.lanes) < 2 or int(dt.lanes) % 2:
        return None
    base = str(tvm.DataType(str(dtype)).with_lanes(1))
    return int(dt.lanes) if base in HALF_DTYPES else None


def _packed_access(buf: Any, indices: Any, lanes: int, analyzer: Any, packed_allocs: dict[Any, Any],
                   storage: dict[Any, Any]) -> tuple[Any, list[Any], Any] | None:
    """``(packed buffer, its index, its declaration or None)`` for a contiguous `lanes`-wide access of `buf` at
    an even offset (through a ``uint32`` view), or a whole element of a re-declared vector allocation; else
    None."""
    from tvm import tirx

    from tilelang.transform import utils as C

    if len(indices) != 1:
        return None
    if _half_lanes(str(buf.ty.dtype)) is not None:  # a vector-element allocation: whole elements only
        packed = _find(packed_allocs, buf)
        return None if packed is None else (packed, list(indices), None)
    if str(buf.ty.dtype) not in HALF_DTYPES:
        return None
    ramp = indices[0]
    if not isinstance(ramp, tirx.Ramp) or not C.is_const(ramp.stride, 1) or C.as_int(ramp.lanes) != lanes:
        return None
    base = ramp.base
    if not analyzer.can_prove(tirx.floormod(base, lanes) == 0):  # the packed vector's natural alignment
        return None
    shape = C.num_elements(buf.ty.shape)
    if shape is None or shape % 2:
        return None
    data = _find(storage, buf)
    view = tirx.decl_buffer((shape // 2,), "uint32", name=f"{buf.name}_u32", scope=C.scope_of(buf))
    half = analyzer.simplify(tirx.floordiv(base, 2))
    index = half if lanes == 2 else tirx.Ramp(half, 1, lanes // 2)
    return view, [index], tirx.DeclBuffer(view, data=buf.data if data is None else data)


def _find(pairs: dict[Any, Any], buf: Any) -> Any:
    """The value of key `buf` (tvm objects are compared by identity: ``==`` builds an expression)."""
    return next((v for k, v in pairs.items() if k.same_as(buf)), None)


def _scalarized(store: Any, load: Any, lanes: int) -> Any:
    """A 16-bit vector copy that cannot be packed (unaligned, or strided on either side), as a serial loop of
    element copies (the codegen has no correct spelling for it); `store` itself when its indices are not flat
    ramps or a side is a vector-element buffer."""
    from tvm import tirx

    from tilelang.transform import utils as C

    ramps = [store.indices, load.indices]
    if any(len(ix) != 1 or not isinstance(ix[0], tirx.Ramp) for ix in ramps):
        return store
    if any(_half_lanes(str(b.ty.dtype)) is not None for b in (store.buffer, load.source)):
        return store
    i = tirx.Var("lane", "int32")

    def element(ramp: Any) -> Any:  # lane i of a ramp of any stride (a transposing copy gathers or scatters)
        return ramp.base + i if C.is_const(ramp.stride, 1) else ramp.base + i * ramp.stride

    copy = tirx.BufferStore(store.buffer, tirx.BufferLoad(load.source, [element(load.indices[0])]),
                            [element(store.indices[0])])
    return tirx.For(i, 0, lanes, tirx.ForKind.SERIAL, copy)


def _flattened(body: Any, buffers: list[Any]) -> Any:
    """`body` with each vector-element allocation of `buffers` (a constant ``(n,)`` of ``float16xL``) re-declared
    as a plain ``(n * L,)`` array of its element type: element ``i`` becomes the lanes ``ramp(i * L, 1, L)``."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    flat = {}
    for buf in buffers:
        dt = tvm.DataType(str(buf.ty.dtype))
        flat[buf] = tirx.decl_buffer([C.num_elements(buf.ty.shape) * int(dt.lanes)], str(dt.with_lanes(1)),
                                     name=str(buf.name), scope=C.scope_of(buf))
    analyzer = tvm.sym.Analyzer()

    def lanes_of(buf: Any, indices: Any) -> tuple[Any, list[Any]] | None:
        new = _find(flat, buf)
        if new is None or len(indices) != 1:
            return None
        lanes = int(tvm.DataType(str(buf.ty.dtype)).lanes)
        return new, [tirx.Ramp(analyzer.simplify(indices[0] * lanes), 1, lanes)]

    def on_load(load: Any) -> Any:
        hit = lanes_of(load.source, list(load.indices))
        return load if hit is None else tirx.BufferLoad(hit[0], hit[1])

    def on_store(store: Any) -> Any:
        hit = lanes_of(store.buffer, list(store.indices))
        return store if hit is None else tirx.BufferStore(hit[0], store.value, hit[1])

    def on_alloc(alloc: Any) -> Any:
        new = _find(flat, alloc.buffer)
        return alloc if new is None else tirx.AllocBuffer(new)

    return tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                         (tirx.AllocBuffer, on_alloc)])


def _packed_dtype(dtype: str) -> str | None:
    """``uint32xN/2`` for a 16-bit float vector element dtype of N lanes, else None."""
    lanes = _half_lanes(dtype)
    if lanes is None:
        return None
    return "uint32" if lanes == 2 else f"uint32x{lanes // 2}"


def PackHalfVectors(target: Any = None) -> tvm.transform.Pass:
    """Rewrite 16-bit vector copies into packed ``uint`` copies (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def rewrite(func: Any, packed_allocs: dict[Any, Any], blocked: list[Any]) -> Any:
        # a declared buffer's storage is the data its declaration binds (a view's own `.data` is not physical)
        storage = {d.buffer: d.data for d in C.collect(func.body, tirx.DeclBuffer)}
        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))

        def on_for(loop: Any, mutator: Any) -> Any:
            analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
            return mutator.default_mutate(loop)

        def on_store(store: Any, mutator: Any) -> Any:
            load = store.value
            if not isinstance(load, tvm.ir.TensorLoad):
                return store
            lanes = _half_lanes(load.ty.dtype)
            if lanes is None:
                return store
            base = str(tvm.DataType(str(load.ty.dtype)).with_lanes(1))
            if any(str(tvm.DataType(str(b.ty.dtype)).with_lanes(1)) != base for b in (store.buffer, load.source)):
                return store
            dst = _packed_access(store.buffer, list(store.indices), lanes, analyzer, packed_allocs, storage)
            src = _packed_access(load.source, list(load.indices), lanes, analyzer, packed_allocs, storage)
            if dst is None or src is None:
                # a vector-element side that would be packed but for this copy: flatten it (it then goes element
                # by element); one already kept for another use keeps its type, and so does this copy
                vectors = [b for b in (store.buffer, load.source) if _half_lanes(str(b.ty.dtype)) is not None]
                if vectors and all(_find(packed_allocs, b) is not None and len(b.ty.shape) == 1
                                   and C.num_elements(b.ty.shape) is not None for b in vectors):
                    blocked.extend(b for b in vectors if not any(b.same_as(k) for k in blocked))
                return _scalarized(store, load, lanes)
            (dbuf, didx, ddecl), (sbuf, sidx, sdecl) = dst, src
            packed = tirx.BufferStore(dbuf, tirx.BufferLoad(sbuf, sidx), didx)
            return C.seq([d for d in (ddecl, sdecl) if d is not None] + [packed])

        def on_alloc(alloc: Any) -> Any:
            packed = _find(packed_allocs, alloc.buffer)
            return alloc if packed is None else tirx.AllocBuffer(packed)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.BufferStore, on_store)])
        return tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc))

    @C.prim_func_pass("metal.pack_half_vectors")
    def pack_half_vectors(func: Any, mod: Any, ctx: Any) -> Any:
        # allocations whose element is a 16-bit vector (StorageRewrite makes them) are re-declared as uint32
        # vectors when every access is a packable copy; one used otherwise keeps its type
        packed_allocs = {}
        for alloc in C.allocations(func.body):
            dtype = _packed_dtype(str(alloc.buffer.ty.dtype))
            if dtype is not None:
                buf = alloc.buffer
                packed_allocs[buf] = tirx.decl_buffer(list(buf.ty.shape), dtype, name=str(buf.name),
                                                      scope=C.scope_of(buf))
        source = func
        while True:
            blocked: list[Any] = []
            body = rewrite(source, packed_allocs, blocked)
            if blocked:  # a copy of a vector-element buffer that cannot be packed: flatten the buffer, go again
                source = C.with_body(source, _flattened(source.body, blocked))
                packed_allocs = {k: v for k, v in packed_allocs.items() if not any(k.same_as(b) for b in blocked)}
                continue
            stale = [b for b in packed_allocs if C.uses_var(body, [b])]
            if not stale:
                break
            packed_allocs = {k: v for k, v in packed_allocs.items() if not any(k.same_as(b) for b in stale)}
        return func if body.same_as(func.body) else C.with_body(func, body)

    return pack_half_vectors
