"""PlanSharedMemory: give shared tiles the storage scope the target can allocate.

``T.alloc_shared`` emits ``"shared.dyn"`` (one dynamically sized pool per block, sized at launch). Targets
whose ``pipeline_options["static_shared_memory"]`` is true (Metal, WebGPU: their codegens need compile-time
sizes) get ``"shared"`` instead. The pass also records the block's shared bytes in the function attribute
``tl.shared_bytes`` (static sizes only) for the artifact's metadata.
"""

from __future__ import annotations

import re
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

# T.float4_e2m1_unpacked: one FP4 value per byte of shared memory (a buffer's dtype prints without the bits)
_BITS = {"bool": 8, "custom[float4_e2m1_unpacked]": 8, "custom[float4_e2m1_unpacked]8": 8}
_TINY_BYTES = 4


_DTYPE = re.compile(r"^(?:u?int|float|bfloat)(\d+)(?:_\w+?)?(?:x(\d+))?$")


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of `dtype` (vector lanes included; sub-byte types round up to one byte): the
    width is the number right after the type class (``float8_e4m3fn``: 8 bits), not every digit of the name."""
    if dtype in _BITS:
        return _BITS[dtype] // 8
    m = _DTYPE.match(dtype)
    if m is None:
        bits, lanes = 32, 1
    else:
        bits, lanes = int(m.group(1)), int(m.group(2) or 1)
    return max(1, bits // 8) * lanes


def PlanSharedMemory(target: Any = None) -> tvm.transform.Pass:
    """Rewrite shared scopes for the target and count shared bytes (see the module docstring)."""

    @C.prim_func_pass("tl.PlanSharedMemory")
    def plan_shared_memory(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        static = bool(C.pipeline_options(tgt).get("static_shared_memory", False)) if tgt is not None else False
        remap = {}
        total = 0
        for alloc in C.allocations(func.body):
            buf = alloc.buffer
            scope = C.scope_of(buf)
            if scope not in ("shared", "shared.dyn"):
                continue
            n = C.num_elements(buf.ty.shape)
            width = dtype_bytes(str(buf.ty.dtype))
            if static and scope == "shared.dyn":
                remap[buf] = C.buffer_with(buf, scope="shared")
            elif scope == "shared.dyn" and n is not None and n * width <= _TINY_BYTES:
                # TVM's MergeSharedMemoryAllocations loses the offset of a pool member of 4 bytes or less
                # ("buffer_byte_offsets" check): give it 8 (its accesses stay in the first elements)
                n = -(-2 * _TINY_BYTES // width)
                remap[buf] = C.buffer_with(buf, shape=[n] if len(buf.ty.shape) == 1 else [n, *[1] * (
                    len(buf.ty.shape) - 1)])
            if n is not None:
                total += n * width
        out = C.with_body(func, C.substitute(func.body, remap))
        return out.with_attr("tl.shared_bytes", total) if total else out

    return plan_shared_memory



_SHARED = ("shared", "shared.dyn")
_HOISTED = "tl.merge_hoisted_allocations"
# ``AttrStmt(0, WARP_ROLES_ATTR, 0, IfThenElse(cond, then, else))``: the branches are warp roles running at once on
# disjoint threads (a producer and its consumers). Shared-memory planning sees their statements as the kernel's
# own, the then-branch's first (so a tile the consumers use only after their main loop, e.g. an epilogue's, can
# take the bytes of the tiles the loop streamed through). The backend setting it promises that every shared tile
# the then-branch touches is touched by the else-branch at or after the point where the then-branch's last access
# is complete (the consumers' wait for the last stage a producer wrote), so the tiles stay live while both run.
WARP_ROLES_ATTR = "tl.warp_roles"
_ROLE_THEN, _ROLE_ELSE = "tl.warp_roles.then", "tl.warp_roles.else"


def _is_launch(stmt: Any) -> bool:
    return isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "thread_extent"


def _reads_shared(value: Any) -> bool:
    """Whether `value` loads from a shared tile (an ``address_of`` of an element is no load)."""
    loads = C.collect(value, tvm.ir.TensorLoad, lambda ld: C.scope_of(ld.source) in _SHARED)
    if not loads:
        return False
    addressed = [c.args[0] for c in C.collect(value, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                                              and c.op.name == "tirx.address_of")]
    return any(not any(ld.same_as(a) for a in addressed) for ld in loads)


def _take_locals(stmt: Any, taken: list[Any]) -> Any:
    """`stmt` (a kernel's body under its outermost launch) without its top-level local allocations of constant
    shape, which are appended to `taken`, and with each top-level value bound from a shared tile read into a
    local cell first; nested launches and other attributes are looked into, loops and branches are not."""
    if isinstance(stmt, tirx.SeqStmt):
        return C.seq(_take_locals(s, taken) for s in stmt.seq)
    if isinstance(stmt, tirx.AttrStmt):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _take_locals(stmt.body, taken), stmt.span)
    if (isinstance(stmt, tirx.AllocBuffer) and C.scope_of(stmt.buffer) not in _SHARED and not stmt.annotations
            and C.num_elements(stmt.buffer.ty.shape) is not None):
        taken.append(stmt)
        return None
    if isinstance(stmt, tirx.Bind) and hasattr(stmt.var.ty, "dtype") and _reads_shared(stmt.value):
        # a top-level value read from a shared tile: read it in a statement, into a local cell
        cell = tirx.decl_buffer((1,), str(stmt.var.ty.dtype), name=f"{stmt.var.name}_value", scope="local")
        taken.append(tirx.AllocBuffer(cell))
        return C.seq([tirx.BufferStore(cell, stmt.value, [0]), tirx.Bind(stmt.var, tirx.BufferLoad(cell, [0]))])
    return stmt


_MARK = "tilelang.sub_byte_shared_index"
_SMALL_BYTES = 64


def _marker() -> Any:
    from tilelang.ir.ops import register_tile_op

    return register_tile_op(_MARK, "an index into a sub-byte shared tile, while the merge pass runs", effect="pure")


def _sub_byte_bits(buf: Any) -> int | None:
    """Bits of `buf`'s element when it is a scalar type narrower than a byte (float4_e2m1fn, int4), else None."""
    dt = tvm.DataType(str(buf.ty.dtype))
    return int(dt.bits) if dt.lanes == 1 and dt.bits < 8 else None


def _mark_sub_byte(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """Before TVM's merge: each dynamic shared tile of a sub-byte type is declared by its byte count (TVM sizes a
    tile as elements x ``DataType.bytes()``, one byte for a 4-bit type) and every index into it is wrapped in the
    marker (TVM adds the tile's pool offset in bytes where the element index needs it in elements)."""
    import tvm_ffi

    vars_: list[Any] = []  # the sub-byte tiles and their data (compared with same_as: Python wrappers differ)
    remap = {}
    for alloc in C.allocations(func.body):
        buf = alloc.buffer
        bits = _sub_byte_bits(buf)
        n = C.num_elements(buf.ty.shape)
        if C.scope_of(buf) != "shared.dyn" or bits is None or n is None:
            continue
        nbytes = -(-n * bits // 8)
        align = None
        if nbytes <= _SMALL_BYTES:  # packed in 16-byte slots (TVM drops the offset of a tile of 8 bytes or less)
            nbytes, align = max(nbytes, 16), 16
        remap[buf] = C.buffer_with(buf, shape=[nbytes], align=align)
        vars_ += [remap[buf], remap[buf].data]
    if not vars_:
        return func
    op = _marker()

    def sub_byte(var: Any) -> bool:
        return any(var.same_as(v) for v in vars_)

    def mark(i: Any) -> Any:
        return tvm.ir.Call(op, [i], ret_ty=str(i.ty.dtype))

    def on_load(ld: Any) -> Any:
        if sub_byte(ld.source) and len(ld.indices) == 1:
            return tirx.BufferLoad(ld.source, [mark(ld.indices[0])])
        return ld

    def on_store(st: Any) -> Any:
        if sub_byte(st.buffer) and len(st.indices) == 1:
            return tirx.BufferStore(st.buffer, st.value, [mark(st.indices[0])])
        return st

    def on_call(call: Any) -> Any:
        if (isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_access_ptr" and sub_byte(call.args[1])):
            args = list(call.args)
            args[2] = mark(args[2])
            return tvm.ir.Call(call.op, args, ret_ty=call.ty)
        return call

    body = C.substitute(func.body, remap)
    body = tvm_ffi.structural_map(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                         (tvm.ir.Call, on_call)])
    return C.with_body(func, body)


def _unmark_sub_byte(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """After TVM's merge: ``marker(i) + offset`` (offset in bytes) becomes ``i + offset * 8 / bits``."""
    import tvm_ffi

    op = _marker()

    def is_mark(x: Any) -> bool:
        return isinstance(x, tvm.ir.Call) and x.op.same_as(op)

    def scale(off: Any, load_bits: int) -> Any:
        return off * (8 // load_bits)

    def fix(idx: Any, load_bits: int) -> Any:
        if is_mark(idx):
            return idx.args[0]
        if isinstance(idx, tirx.Add) and is_mark(idx.a):
            return idx.a.args[0] + scale(idx.b, load_bits)
        if isinstance(idx, tirx.Add) and is_mark(idx.b):
            return idx.b.args[0] + scale(idx.a, load_bits)
        return idx

    def bits_of(dtype: str) -> int:
        return int(tvm.DataType(dtype).bits)

    def on_load(ld: Any) -> Any:
        if len(ld.indices) == 1 and _has_mark(ld.indices[0]):
            return tirx.BufferLoad(ld.source, [fix(ld.indices[0], bits_of(str(ld.source.ty.dtype)))])
        return ld

    def on_store(st: Any) -> Any:
        if len(st.indices) == 1 and _has_mark(st.indices[0]):
            return tirx.BufferStore(st.buffer, st.value, [fix(st.indices[0], bits_of(str(st.buffer.ty.dtype)))])
        return st

    def on_call(call: Any) -> Any:
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_access_ptr" and _has_mark(call.args[2]):
            args = list(call.args)
            args[2] = fix(args[2], bits_of(str(args[0].ty.dtype)))
            return tvm.ir.Call(call.op, args, ret_ty=call.ty)
        return call

    def _has_mark(x: Any) -> bool:
        return bool(C.collect(x, tvm.ir.Call, is_mark))

    body = tvm_ffi.structural_map(func.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                              (tvm.ir.Call, on_call)])
    leftover = C.collect(body, tvm.ir.Call, is_mark)
    if leftover:
        raise C.lowering_error(func, f"sub-byte shared tile index {leftover[0]} lost its pool offset in the merge")
    return C.with_body(func, body)


def MergeSharedMemoryAllocations(target: Any = None) -> tvm.transform.Pass:
    """TVM's MergeSharedMemoryAllocations (one pool for the block's dynamic shared tiles), with the kernel's
    top-level local allocations out of its way.

    TVM's pass tracks the allocations of every scope and requires each load of one to sit in a statement nested
    below the allocation: a value bound at the kernel's top level that reads a local variable (``v =
    T.alloc_var(...)``; ``m = v * 2``) failed its "Load memory in places other than store" check, though local
    buffers play no part in the merge. While the pass runs those allocations stand just outside the kernel's
    outermost launch; afterwards they are back at the top of its body. A top-level value bound from a shared tile
    (``x = S[0]``) failed the same check: it is stored into a local cell and bound from there. Warp-role branches
    (`WARP_ROLES_ATTR`) are planned as the kernel's own statements, in order."""
    from tvm import s_tir

    @C.prim_func_pass("tl.HoistLocalAllocations")
    def hoist(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        taken: list[Any] = []

        def visit(stmt: Any) -> Any:
            if isinstance(stmt, tirx.SeqStmt):
                return C.seq(visit(s) for s in stmt.seq)
            if _is_launch(stmt):
                before = len(taken)
                launch = tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _take_locals(stmt.body, taken),
                                       stmt.span)
                return C.seq([*taken[before:], launch])
            return stmt

        body = visit(func.body)
        if not taken:
            return func
        return C.with_body(func, body).with_attr(_HOISTED, [a.buffer for a in taken])

    @C.prim_func_pass("tl.RestoreLocalAllocations")
    def restore(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        hoisted = func.attrs.get(_HOISTED) if func.attrs else None
        if hoisted is None:
            return func

        def is_hoisted(stmt: Any) -> bool:
            return isinstance(stmt, tirx.AllocBuffer) and any(b.same_as(stmt.buffer) for b in hoisted)

        def visit(stmt: Any) -> Any:
            if not isinstance(stmt, tirx.SeqStmt):
                return stmt
            out: list[Any] = []
            pending: list[Any] = []
            for s in stmt.seq:
                if is_hoisted(s):
                    pending.append(s)
                elif _is_launch(s) and pending:
                    out.append(tirx.AttrStmt(s.node, s.attr_key, s.value, C.seq([*pending, s.body]), s.span))
                    pending = []
                else:
                    out.extend(pending)
                    pending = []
                    out.append(visit(s))
            return C.seq(out + pending)

        return C.with_body(func, visit(func.body)).without_attr(_HOISTED)

    @C.prim_func_pass("tl.LineariseWarpRoles")
    def linearise(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def on_attr(s: Any, m: Any) -> Any:
            s = m.default_mutate(s)
            body = s.body
            if str(s.attr_key) != WARP_ROLES_ATTR or not isinstance(body, tirx.IfThenElse) or body.else_case is None:
                return s
            zero = tirx.IntImm("int32", 0)
            return C.seq([tirx.AttrStmt(zero, _ROLE_THEN, body.condition, body.then_case),
                          tirx.AttrStmt(zero, _ROLE_ELSE, body.condition, body.else_case)])

        return C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.AttrStmt, on_attr)]))

    @C.prim_func_pass("tl.RestoreWarpRoles")
    def restore_roles(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def role(s: Any, key: str) -> bool:
            return isinstance(s, tirx.AttrStmt) and str(s.attr_key) == key

        def on_seq(s: Any, m: Any) -> Any:
            parts = [m.mutate(x) for x in s.seq]
            out: list[Any] = []
            for x in parts:
                if role(x, _ROLE_ELSE) and out and role(out[-1], _ROLE_THEN):
                    then = out.pop()
                    roles = tirx.IfThenElse(then.value, then.body, x.body)
                    x = tirx.AttrStmt(tirx.IntImm("int32", 0), WARP_ROLES_ATTR, tirx.IntImm("int32", 0), roles)
                out.append(x)
            return C.seq(out)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, on_seq)])
        left = C.collect(body, tirx.AttrStmt, lambda a: str(a.attr_key) in (_ROLE_THEN, _ROLE_ELSE))
        if left:
            raise C.lowering_error(func, "internal: a warp-role branch lost its partner in shared-memory planning")
        return C.with_body(func, body)

    @C.prim_func_pass("tl.MarkSubByteSharedIndices")
    def mark(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return _mark_sub_byte(func)

    @C.prim_func_pass("tl.UnmarkSubByteSharedIndices")
    def unmark(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return _unmark_sub_byte(func)

    return tvm.transform.Sequential([hoist, linearise, mark, s_tir.transform.MergeSharedMemoryAllocations(), unmark,
                                     restore_roles, restore],
                                    name="tl.MergeSharedMemoryAllocations")
