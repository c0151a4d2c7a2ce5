"""ConfigIndexBitwidth: 64-bit offsets for the buffers whose element offsets can exceed int32.

Index arithmetic is int32 by default. A buffer whose element count is not provably below 2**31 (a static shape
of 2**31 elements or more, or a shape with a runtime dimension such as ``T.dynamic("m")`` rows of ``N`` columns)
gets its static extents as int64 and every index into it widened to int64 before ``FlattenBuffer``, so the
flattened offset is computed in 64 bits. Other buffers keep int32 offsets: a small kernel costs nothing.
An index whose dimension fits int32 is cast as a whole (an in-bounds index fits); an index into a dimension of
2**31 elements or more is rebuilt with int64 operands.

The pass config ``tl.config_index_bitwidth`` (the reference TileLang's key) overrides the choice: ``64`` widens
every buffer's offsets, ``32`` widens none (a static buffer too large for it is a `LoweringError`). A target
whose device code has no 64-bit integers says ``index_bits: 32`` in its ``pipeline_options`` and gets the
``32`` behaviour.

`CheckDynamicExtents` runs after ``MakePackedAPI``: TVM binds an int32 symbolic dimension by truncating the
tensor's int64 extent, so a call whose extent exceeds int32 raises a ``ValueError`` naming the argument instead.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

INT32_MAX = 2**31 - 1
_ARITH = (tirx.Add, tirx.Sub, tirx.Mul, tirx.FloorDiv, tirx.FloorMod, tirx.Div, tirx.Mod, tirx.Min, tirx.Max)


def _dtype(e: Any) -> tvm.DataType:
    return tvm.DataType(str(e.ty.dtype))


def _is_int32(e: Any) -> bool:
    dt = _dtype(e)
    return dt.type_code == tvm.DataTypeCode.INT and dt.bits == 32


def _wide(dt: tvm.DataType) -> str:
    return "int64" if dt.lanes == 1 else f"int64x{dt.lanes}"


def widen(e: Any) -> Any:
    """`e` (an int32 index expression) computed in int64: every operand widened, so no intermediate overflows."""
    if not _is_int32(e):
        return e
    if isinstance(e, tirx.IntImm):
        return tirx.IntImm("int64", int(e.value))
    if isinstance(e, _ARITH):
        return type(e)(widen(e.a), widen(e.b))
    if isinstance(e, tirx.Ramp):
        return tirx.Ramp(widen(e.base), widen(e.stride), e.lanes)
    if isinstance(e, tirx.Broadcast):
        return tirx.Broadcast(widen(e.value), e.lanes)
    return tirx.Cast(_wide(_dtype(e)), e)


def max_elements(buf: Any) -> int:
    """An upper bound of `buf`'s element count: a symbolic extent counts as its dtype's largest value."""
    total = 1
    for extent in buf.ty.shape:
        value = C.as_int(extent)
        if value is None:
            value = 2 ** (_dtype(extent).bits - 1) - 1 if _dtype(extent).type_code == tvm.DataTypeCode.INT \
                else 2**64
        total *= value
    return total


def _widened_buffer(buf: Any) -> Any:
    ty = buf.ty

    def ext(e: Any) -> Any:
        return tirx.IntImm("int64", int(e.value)) if isinstance(e, tirx.IntImm) and _is_int32(e) else e

    return tirx.decl_buffer([ext(s) for s in ty.shape], str(ty.dtype), name=str(buf.name),
                            strides=[ext(s) for s in ty.strides] or None, elem_offset=ty.elem_offset,
                            scope=str(ty.storage_scope), data_alignment=int(ty.data_alignment),
                            offset_factor=int(ty.offset_factor))


def configured_bits(func: Any, target: Any) -> int | None:
    """``tl.config_index_bitwidth`` (32 or 64), else the target's ``index_bits`` option, else None (per buffer)."""
    from tilelang.transform.config import current_tl_config

    bits = current_tl_config("tl.config_index_bitwidth", None)
    if bits is None:
        bits = C.pipeline_options(target).get("index_bits") if target is not None else None
    if bits is None:
        return None
    if isinstance(bits, bool) or not isinstance(bits, int) or bits not in (32, 64):
        message = f"pass config tl.config_index_bitwidth must be 32 or 64, got {bits!r}"
        raise ValueError(message) if func is None else C.lowering_error(func, message)
    return bits


def ConfigIndexBitwidth(target: Any = None) -> tvm.transform.Pass:
    """Widen the offsets of the buffers that need 64 bits (see the module docstring)."""

    from tilelang.transform.config import current_tl_config

    @C.prim_func_pass("tl.ConfigIndexBitwidth")
    def config_index_bitwidth(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        bits = configured_bits(func, target)
        buffers = [p for p in func.params if tirx.is_buffer_var(p)]
        buffers += [a.buffer for a in C.allocations(func.body)]
        buffers += [d.buffer for d in C.collect(func.body, tirx.DeclBuffer)]
        if bits == 64:
            chosen = buffers
        else:
            chosen = [b for b in buffers if max_elements(b) > INT32_MAX]
            if bits == 32:
                for b in chosen:
                    if C.num_elements(b.ty.shape) is not None:
                        why = "the pass config tl.config_index_bitwidth is 32" \
                            if current_tl_config("tl.config_index_bitwidth", None) is not None \
                            else f"target {target.kind.name!r} indexes in 32 bits (pipeline option index_bits)"
                        raise C.lowering_error(func, f"buffer {b.name} has {max_elements(b)} elements: its offsets "
                                               f"need 64 bits, but {why}")
                chosen = []
        if not chosen:
            return func
        remap = {b: _widened_buffer(b) for b in chosen}
        wide = list(remap.values())

        def is_wide(buf: Any) -> bool:
            return any(buf.same_as(w) for w in wide)

        def widen_indices(buf: Any, indices: Any) -> list[Any]:
            out = []
            for idx, extent in zip(indices, buf.ty.shape):
                fits = (C.as_int(extent) or INT32_MAX + 1) <= INT32_MAX
                out.append(idx if not _is_int32(idx) else
                           tirx.Cast(_wide(_dtype(idx)), idx) if fits else widen(idx))
            return out

        def on_load(load: Any, m: Any) -> Any:
            load = m.default_mutate(load)
            if not is_wide(load.source):
                return load
            return tirx.BufferLoad(load.source, widen_indices(load.source, load.indices), span=load.span)

        def on_store(store: Any, m: Any) -> Any:
            store = m.default_mutate(store)
            if not is_wide(store.buffer):
                return store
            return tirx.BufferStore(store.buffer, store.value, widen_indices(store.buffer, store.indices),
                                    span=store.span)

        body = C.substitute(func.body, remap)
        body = tvm_ffi.structural_mutate(body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
        params = [remap.get(p, p) for p in func.params]
        return tirx.PrimFunc(params, body, func.ret_type, func.attrs)

    return config_index_bitwidth


def _shape_dim(value: Any) -> tuple[Any, int] | None:
    """``(shape handle, dim)`` when `value` is ``Cast(int32, tvm_struct_get(shape, dim, kArrShape, int64))``,
    how ``MakePackedAPI`` binds an int32 symbolic dimension."""
    if not (isinstance(value, tirx.Cast) and _is_int32(value)):
        return None
    get = value.value
    if not (isinstance(get, tvm.ir.Call) and isinstance(get.op, tvm.ir.Op) and get.op.name == "tirx.tvm_struct_get"):
        return None
    handle, dim = get.args[0], C.as_int(get.args[1])
    return (handle, dim) if isinstance(handle, tvm.ir.Var) and dim is not None else None


def CheckDynamicExtents(target: Any = None) -> tvm.transform.Pass:
    """After ``MakePackedAPI``: a call binding an int32 symbolic dimension to an extent over int32 raises a
    ``ValueError`` naming the argument (TVM would truncate it)."""

    @C.prim_func_pass("tl.CheckDynamicExtents")
    def check_dynamic_extents(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        owners: dict[str, str] = {}  # shape handle name -> argument name

        def on_bind(b: Any) -> None:
            v = b.value
            if isinstance(v, tvm.ir.Call) and isinstance(v.op, tvm.ir.Op) and v.op.name == "tirx.tvm_struct_get" \
                    and isinstance(v.args[0], tvm.ir.Var) and C.as_int(v.args[2]) == 2:  # kArrShape
                owners[str(b.var.name)] = str(v.args[0].name).removesuffix(".handle").removesuffix("_handle")

        C.walk(func.body, [(tirx.Bind, on_bind)])
        if not owners:
            return func
        name = str(func.attrs["global_symbol"]) if func.attrs and "global_symbol" in func.attrs else "kernel"
        name = name.removeprefix("__tvm_ffi_")

        def on_seq(seq: Any, m: Any) -> Any:
            seq = m.default_mutate(seq)
            out, changed = [], False
            for s in seq.seq:
                found = _shape_dim(s.value) if isinstance(s, tirx.Bind) else None
                if found is not None and str(found[0].name) in owners:
                    arg, dim = owners[str(found[0].name)], found[1]
                    msg = (f"{arg}.shape[{dim}] (the runtime dimension {s.var.name} of {name}) exceeds int32 "
                           f"({INT32_MAX}); declare it T.dynamic('{s.var.name}', 'int64')")
                    fits = tirx.LE(s.value.value, tirx.IntImm("int64", INT32_MAX))
                    # (TVM 0.27's Python signature names kind first; its FFI constructor takes the condition first)
                    out.append(tirx.AssertStmt(fits, tvm.ir.StringImm("ValueError"), [tvm.ir.StringImm(msg)]))
                    changed = True
                out.append(s)
            return tirx.SeqStmt(out) if changed else seq

        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, on_seq)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return check_dynamic_extents
