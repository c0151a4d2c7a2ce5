"""DecoupleTypeCast: a vectorized loop that converts dtypes stages its memory accesses through local buffers.

In ``for v in T.vectorized(16): b[v] = T.cast(a_frag[v], "float16")`` one loop both converts and touches global
or shared memory, so its vector width is bound by both dtypes at once. The pass splits it into a compute loop
that works only on registers and plain vectorized copies between memory and ``local`` staging buffers::

    for v in T.vectorized(16): b_local_cast[v] = T.cast(a_frag[v], "float16")   # compute
    for v_copy in T.vectorized(16): b[v_copy] = b_local_cast[v_copy]            # copy to memory

and the converse for loads (copy from memory first). A store that also reads the same element (read-modify-
write) copies in and out through one buffer. It applies to a vectorized loop of constant extent whose body,
once its ``Bind`` values are inlined, is one store (optionally under an ``if`` without ``else``) holding a
``Cast`` outside index expressions and accessing global or shared memory at an index that depends on the loop
variable; anything else is left alone. The staging buffers are allocated right before the loops.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["DecoupleTypeCast", "normalize_flat_binds"]

_MEMORY_SCOPES = ("global", "shared", "shared.dyn")


def _is_memory(buf: Any) -> bool:
    return C.scope_of(buf) in _MEMORY_SCOPES


def _same(a: Any, b: Any) -> bool:
    return a.same_as(b)


def _index_nodes(expr: Any, typ: type) -> list[Any]:
    """Nodes of `typ` that sit inside the indices of a load in `expr` (index arithmetic, not data)."""
    inner: list[Any] = []
    for ld in C.collect(expr, tvm.ir.TensorLoad):
        for index in ld.indices:
            inner += C.collect(index, typ)
    return inner


def _outside(found: list[Any], excluded: list[Any]) -> list[Any]:
    return [n for n in found if not any(_same(n, e) for e in excluded)]


def _has_cast(store: Any) -> bool:
    value = store.value
    return bool(_outside(C.collect(value, tirx.Cast), _index_nodes(value, tirx.Cast)))


def _data_loads(store: Any, loop_var: Any) -> list[Any]:
    """Memory loads in the stored value that vary with `loop_var` (not in indices nor select conditions)."""
    value = store.value
    excluded = _index_nodes(value, tvm.ir.TensorLoad)
    for call in C.collect(value, tvm.ir.Call):
        if isinstance(call.op, tvm.ir.Op) and call.op.name.endswith("if_then_else"):
            excluded += C.collect(call.args[0], tvm.ir.TensorLoad)
    return [ld for ld in _outside(C.collect(value, tvm.ir.TensorLoad), excluded)
            if _is_memory(ld.source) and any(C.uses_var(i, [loop_var]) for i in ld.indices)]


def _normalize(stmt: Any, env: dict[Any, Any]) -> Any:
    if isinstance(stmt, tirx.Bind):
        env[stmt.var] = C.substitute(stmt.value, env)
        return None
    if isinstance(stmt, tirx.SeqStmt):
        scope = dict(env)
        kept = [s for s in (_normalize(child, scope) for child in stmt.seq) if s is not None]
        return C.seq(kept) if kept else None
    if isinstance(stmt, tirx.IfThenElse):
        then = _normalize(stmt.then_case, dict(env)) or tirx.Evaluate(0)
        other = None
        if stmt.else_case is not None:
            other = _normalize(stmt.else_case, dict(env)) or tirx.Evaluate(0)
        return tirx.IfThenElse(C.substitute(stmt.condition, env), then, other)
    if isinstance(stmt, tirx.For):
        body = _normalize(stmt.body, dict(env)) or tirx.Evaluate(0)
        return tirx.For(stmt.loop_var, C.substitute(stmt.min, env), C.substitute(stmt.extent, env), stmt.kind,
                        body, stmt.thread_binding, stmt.annotations)
    return C.substitute(stmt, env)


def normalize_flat_binds(stmt: Any) -> Any:
    """`stmt` with each ``Bind``'s value substituted into the statements it dominates, and the Binds removed."""
    out = _normalize(stmt, {})
    return stmt if out is None else out


class _Entry:
    """One staged access: memory buffer, its indices, and the local staging buffer."""

    def __init__(self, buf: Any, indices: list[Any], local: Any) -> None:
        self.buf, self.indices, self.local = buf, indices, local

    def matches(self, buf: Any, indices: Any) -> bool:
        return (_same(self.buf, buf) and len(self.indices) == len(indices)
                and all(tvm_ffi.structural_equal(a, b) for a, b in zip(self.indices, indices)))


def _find(entries: list[_Entry], buf: Any, indices: Any) -> _Entry | None:
    return next((e for e in entries if e.matches(buf, indices)), None)


class _Decoupler:
    def __init__(self) -> None:
        self.count = 0

    def _name(self, base: str) -> str:
        name = base if self.count == 0 else f"{base}_{self.count}"
        self.count += 1
        return name

    def _entries(self, accesses: list[tuple[Any, list[Any]]], extent: int, known: list[_Entry]) -> list[_Entry]:
        entries: list[_Entry] = []
        for buf, indices in accesses:
            if _find(known + entries, buf, indices) is not None:
                continue
            local = tirx.decl_buffer((extent,), str(buf.ty.dtype), name=self._name(f"{buf.name}_local_cast"),
                                     scope="local")
            entries.append(_Entry(buf, indices, local))
        return entries

    def rewrite(self, loop: Any) -> Any:
        if loop.kind != tirx.ForKind.VECTORIZED or not isinstance(loop.extent, tirx.IntImm):
            return loop
        body = normalize_flat_binds(loop.body)
        condition, root = None, body
        if isinstance(body, tirx.IfThenElse) and body.else_case is None:
            condition, root = body.condition, body.then_case
        if not isinstance(root, tirx.BufferStore) or not _has_cast(root):
            return loop
        var, extent = loop.loop_var, int(loop.extent.value)
        stores = [(root.buffer, list(root.indices))] if _is_memory(root.buffer) else []
        loads = [(ld.source, list(ld.indices)) for ld in _data_loads(root, var)]
        if not stores and not loads:
            return loop
        store_entries = self._entries(stores, extent, [])
        load_entries = self._entries(loads, extent, store_entries)
        rmw = [e for e in store_entries if any(e.matches(b, i) for b, i in loads)]
        lane = [var]

        def on_load(ld: Any) -> Any:
            entry = _find(store_entries + load_entries, ld.source, list(ld.indices))
            return ld if entry is None else tirx.BufferLoad(entry.local, lane)

        value = tvm_ffi.structural_map(root.value, (tvm.ir.TensorLoad, on_load))
        target = store_entries[0].local if store_entries else root.buffer
        compute = tirx.BufferStore(target, value, lane if store_entries else list(root.indices))
        if condition is not None:
            compute = tirx.IfThenElse(condition, compute, None)

        def copies(entries: list[_Entry], to_memory: bool) -> list[Any]:
            loops = []
            for e in entries:
                v = tirx.Var(f"{var.name}_copy", str(var.ty.dtype))
                indices = [C.substitute(i, {var: v}) for i in e.indices]
                if to_memory:
                    stmt = tirx.BufferStore(e.buf, tirx.BufferLoad(e.local, [v]), indices)
                else:
                    stmt = tirx.BufferStore(e.local, tirx.BufferLoad(e.buf, indices), [v])
                if condition is not None:
                    stmt = tirx.IfThenElse(C.substitute(condition, {var: v}), stmt, None)
                loops.append(tirx.For(v, loop.min, loop.extent, tirx.ForKind.VECTORIZED, stmt, None,
                                      loop.annotations))
            return loops

        compute_loop = tirx.For(var, loop.min, loop.extent, tirx.ForKind.VECTORIZED, compute, None,
                                loop.annotations)
        allocs = [tirx.AllocBuffer(e.local) for e in store_entries + load_entries]
        return tirx.SeqStmt([*allocs, *copies(load_entries + rmw, False), compute_loop,
                             *copies(store_entries, True)])


def DecoupleTypeCast(target: Any = None) -> tvm.transform.Pass:
    """Stage the memory accesses of converting vectorized loops through local buffers (see the module docstring).

    Runs on loads and stores with logical indices, before vectorization and storage planning."""

    @C.prim_func_pass("tl.DecoupleTypeCast")
    def decouple(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        decoupler = _Decoupler()

        def on_for(loop: Any, mutator: Any) -> Any:
            return decoupler.rewrite(mutator.default_mutate(loop))

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return decouple
