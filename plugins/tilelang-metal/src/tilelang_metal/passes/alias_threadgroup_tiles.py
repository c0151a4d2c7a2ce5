"""``metal.alias_threadgroup_tiles`` (`AliasThreadgroupTiles`): one threadgroup allocation, tiles point into it.

The threadgroup tiles of a kernel become one ``threadgroup uchar buf_shmem[bytes]`` and, per tile, a pointer of
the tile's own type into it::

    threadgroup half* A_shared = (threadgroup half*)(... &buf_shmem[offset]);

Every pointer carries its address space in its type (no unqualified ``(half*)`` casts for the Metal compiler to
reject), the kernel declares its threadgroup memory once, and the size check sees one array. Offsets come from
the tiles' liveness (`tilelang_metal.threadgroup_liveness`): tiles whose lifetimes never overlap share bytes (a
flash attention's K tile and its P tile), each at a 16-byte aligned offset (``uint4`` vector copies and
simdgroup loads), with a threadgroup barrier wherever a tile takes bytes another tile's threads may still read.
Kernels whose tiles are not allocated in one statement list, or have symbolic sizes, are left as they are.
"""

from __future__ import annotations

from typing import Any

import tvm

SCOPE = "shared"
MERGED_NAME = "buf_shmem"


def _nbytes(buf: Any) -> int | None:
    from tilelang.transform import utils as C

    n = C.num_elements(buf.ty.shape)
    if n is None:
        return None
    dt = tvm.DataType(str(buf.ty.dtype))
    return n * (dt.bits * int(dt.lanes) // 8)


def _alias_seq(seq: Any) -> Any | None:
    """`seq` with its threadgroup allocations merged (offsets planned by liveness, barriers added where storage
    is reused), or None when it has none or one of symbolic size."""
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_metal.threadgroup_liveness import plan, rewrite

    allocs = [s for s in seq.seq if isinstance(s, tirx.AllocBuffer) and C.scope_of(s.buffer) == SCOPE]
    if not allocs:
        return None
    sizes = {}
    for alloc in allocs:
        size = _nbytes(alloc.buffer)
        if size is None:
            return None
        sizes[alloc.buffer] = size
    layout = plan(seq, [a.buffer for a in allocs], sizes)
    seq = rewrite(seq, layout)
    extra = {}
    for tile, decls in layout.declared:
        extra.setdefault(tile, []).extend(decls)
        sizes.update({d.buffer: sizes[tile] for d in decls if isinstance(d, tirx.AllocBuffer)})
    seq = tirx.SeqStmt([x for s in seq.seq for x in ([s, *extra.get(s.buffer, [])] if isinstance(s, tirx.AllocBuffer)
                                                      else [s])])
    merged = tirx.decl_buffer((layout.total,), "uint8", name=MERGED_NAME, scope=SCOPE)
    remap, stmts, seen = {}, [], 0
    for stmt in seq.seq:
        if not (isinstance(stmt, tirx.AllocBuffer) and stmt.buffer in sizes):
            stmts.append(stmt)
            continue
        buf = stmt.buffer
        if seen == 0:
            stmts.append(tirx.AllocBuffer(merged))
        dtype = str(buf.ty.dtype)
        ptr_ty = tvm.ir.PointerType(tvm.ir.PrimType(dtype), SCOPE)
        ptr = tirx.Var(str(buf.name), ptr_ty)
        addr = tirx.address_of(tirx.BufferLoad(merged, [layout.offsets[buf]]))
        stmts.append(tirx.Bind(ptr, tvm.ir.Call(tvm.ir.Op.get("tirx.reinterpret"), [addr], ret_ty=ptr_ty)))
        view = tirx.decl_buffer(list(buf.ty.shape), dtype, name=str(buf.name), scope=SCOPE)
        stmts.append(tirx.DeclBuffer(view, data=ptr))
        remap[buf] = view
        seen += 1
    return C.substitute(tirx.SeqStmt(stmts), remap)


def AliasThreadgroupTiles(target: Any = None) -> tvm.transform.Pass:
    """Merge a kernel's threadgroup tiles into one allocation of typed aliases (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    @C.prim_func_pass("metal.alias_threadgroup_tiles")
    def alias_threadgroup_tiles(func: Any, mod: Any, ctx: Any) -> Any:
        allocs = [a for a in C.allocations(func.body) if C.scope_of(a.buffer) == SCOPE]
        if not allocs:
            return func
        owners = [s for s in C.collect(func.body, tirx.SeqStmt)
                  if any(isinstance(x, tirx.AllocBuffer) and C.scope_of(x.buffer) == SCOPE for x in s.seq)]
        if len(owners) != 1 or sum(isinstance(x, tirx.AllocBuffer) and C.scope_of(x.buffer) == SCOPE
                                   for x in owners[0].seq) != len(allocs):
            return func  # tiles allocated in different scopes: keep them apart
        merged = _alias_seq(owners[0])
        if merged is None:
            return func
        target_seq = owners[0]
        body = tvm_ffi.structural_map(func.body, (tirx.SeqStmt, lambda s: merged if s.same_as(target_seq) else s))
        return C.with_body(func, body)

    return alias_threadgroup_tiles
