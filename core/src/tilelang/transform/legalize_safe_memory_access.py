"""LegalizeSafeMemoryAccess: guard every access to a global buffer that may fall outside the buffer.

A kernel whose sizes are not multiples of its block sizes (``M = 100`` with ``block_M = 64``, a ``T.dynamic``
``m``) indexes past the edge of its tensors in the last blocks: ``C[by * 64 + i, j] = ...`` inside a
``T.Parallel`` over the whole block, a hand-written ``T.grid`` tile loop, an atomic on an edge element. Such
accesses corrupt memory (on the CPU: the heap). After tile ops and parallel loops are lowered, this pass visits
every load and store of a ``global`` buffer with an analyzer that knows the launch extents, the enclosing loop
ranges, the conditions of enclosing ``if``s and ``if_then_else`` branches, and proves ``0 <= index < extent``
per dimension against the buffer's (possibly symbolic) shape. Where it cannot:

- a store ``B[idx] = v`` becomes ``if in_bounds(idx): B[idx] = v``;
- a load ``A[idx]`` becomes ``if_then_else(in_bounds(idx), A[idx], 0)`` (the lanes past the edge read 0);
- an ``Evaluate`` whose call takes ``address_of(X[idx])`` of a global buffer (atomics, async copies) runs only
  when ``idx`` is in bounds.

A vector access (a ``Ramp`` / ``Broadcast`` index, or any vector index) is checked lane by lane (first and last
lane of a linear index, every lane otherwise): when every lane fits it runs as the vector access, else lane by
lane -- a store writes the lanes inside the buffer, a load reads them and 0 for the others.

Accesses that are proven safe are left alone, so kernels with divisible sizes keep their exact code. Pointers
(``address_of``, ``tvm_access_ptr``) are not loads and are never rewritten in place. The pass config
``tl.disable_safe_memory_legalize`` (`PassConfigKey.TL_DISABLE_SAFE_MEMORY_ACCESS`) turns it off.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.config import current_tl_config

_POINTER_OPS = ("tirx.address_of", "tirx.tvm_access_ptr")
_IF_THEN_ELSE = "prim.if_then_else"


def _op_name(call: Any) -> str:
    return call.op.name if isinstance(call.op, tvm.ir.Op) else ""


def _dtype(e: Any) -> str:
    return str(e.dtype) if hasattr(e, "dtype") else str(e.ty.dtype)


def _conj(conds: Sequence[Any]) -> Any:
    if not conds:
        return None
    out = conds[0]
    for c in conds[1:]:
        out = tirx.And(out, c)
    return out


def _as_negative(cond: Any) -> Any:
    """``d`` with ``cond <=> d < 0`` for an integer comparison, else None."""
    if isinstance(cond, tirx.LT):
        return cond.a - cond.b
    if isinstance(cond, tirx.LE):
        return cond.a - cond.b - 1
    if isinstance(cond, tirx.GT):
        return cond.b - cond.a
    if isinstance(cond, tirx.GE):
        return cond.b - cond.a - 1
    return None


def _literals(cond: Any) -> list[Any]:
    if isinstance(cond, tirx.And):
        return _literals(cond.a) + _literals(cond.b)
    return [cond]


def _lanes(e: Any) -> int:
    return int(tvm.DataType(_dtype(e)).lanes)


def _index_lanes(indices: Sequence[Any]) -> int:
    return max((_lanes(i) for i in indices), default=1)


def _lane(e: Any, lane: int) -> Any:
    """Lane `lane` of the (possibly vector) integer expression `e`, as a scalar expression."""
    if _lanes(e) == 1:
        return e
    if isinstance(e, tirx.Ramp):
        return e.base + e.stride * lane
    if isinstance(e, tirx.Broadcast):
        return e.value
    return tirx.Shuffle([e], [tirx.const(lane, "int32")])


def _lane_indices(indices: Sequence[Any], lane: int) -> list[Any]:
    return [_lane(i, lane) for i in indices]


class _Guard:
    """The rewriting state: the global buffers to protect and an analyzer that follows the visit's context."""

    def __init__(self, func: tirx.PrimFunc) -> None:
        self.ana = tvm.sym.Analyzer()
        self.buffers = {p for p in func.params if tirx.is_buffer_var(p) and C.scope_of(p) == "global"}
        self.buffers |= {a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == "global"}
        self.added = 0
        # known ``d < 0`` facts of the enclosing conditions: TVM's analyzer misses some of its own constraints
        # (``x + y // 64 < m`` does not prove itself), so they are also compared by difference
        self.facts: list[Any] = []

    # ------------------------------------------------------------------ proofs
    def _prove(self, pred: Callable[[Any], Any], index: Any) -> bool:
        """`pred(index)` holds; an ``if_then_else`` index is proven branch by branch under its condition."""
        if isinstance(index, tvm.ir.Call) and _op_name(index) == _IF_THEN_ELSE:
            cond, then, other = index.args
            with self.assuming(cond):
                ok = self._prove(pred, then)
            if not ok:
                return False
            with self.ana.constraint_scope(tirx.Not(cond)):
                return self._prove(pred, other)
        goal = pred(index)
        if self.ana.can_prove(goal):
            return True
        d = _as_negative(goal)
        return d is not None and any(self.ana.can_prove(d <= f) for f in self.facts
                                     if _dtype(f) == _dtype(d))

    @contextlib.contextmanager
    def assuming(self, cond: Any) -> Iterator[None]:
        """Analyzer constraint scope for `cond`, with its comparisons recorded as facts."""
        facts = [d for lit in _literals(cond) if (d := _as_negative(lit)) is not None]
        self.facts.extend(facts)
        try:
            with self.ana.constraint_scope(cond):
                yield
        finally:
            del self.facts[len(self.facts) - len(facts):]

    def _scalar_in_bounds(self, buf: Any, indices: Sequence[Any]) -> Any:
        """The condition that scalar `indices` lie inside `buf`, or None when the analyzer proves it."""
        conds = []
        for index, extent in zip(indices, buf.ty.shape):
            dtype = _dtype(index)
            if _dtype(extent) != dtype:
                extent = tirx.Cast(dtype, extent)
            zero = tirx.const(0, dtype)
            if not self._prove(lambda e, z=zero: e >= z, index):
                conds.append(index >= zero)
            if not self._prove(lambda e, x=extent: e < x, index):
                conds.append(index < extent)
        return _conj(conds)

    def in_bounds(self, buf: Any, indices: Sequence[Any]) -> Any:
        """The (scalar) condition that every lane of `indices` lies inside `buf`, or None when proven.

        A vector index is checked lane by lane: for ``Ramp``/``Broadcast`` indices (linear in the lane) the first
        and the last lane bound all the others; any other vector index is checked at every lane.
        """
        lanes = _index_lanes(indices)
        if lanes == 1:
            cond = self._scalar_in_bounds(buf, indices)
        else:
            linear = all(_lanes(i) == 1 or isinstance(i, (tirx.Ramp, tirx.Broadcast)) for i in indices)
            picked = (0, lanes - 1) if linear else range(lanes)
            cond = _conj([c for lane in picked
                          if (c := self._scalar_in_bounds(buf, _lane_indices(indices, lane))) is not None])
        if cond is not None:
            self.added += 1
        return cond

    # ------------------------------------------------------------------ statements
    def on_attr(self, s: Any, m: Any) -> Any:
        if s.attr_key == "thread_extent":
            self.ana.bind(s.node.var, tvm.ir.Range.from_min_extent(0, s.value), allow_override=True)
        return m.default_mutate(s)

    def on_for(self, loop: Any, m: Any) -> Any:
        self.ana.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent), allow_override=True)
        return m.default_mutate(loop)

    def on_if(self, s: Any, m: Any) -> Any:
        cond = m.mutate(s.condition)
        with self.assuming(cond):
            then = m.mutate(s.then_case)
        other = None
        if s.else_case is not None:
            with self.assuming(tirx.Not(cond)):
                other = m.mutate(s.else_case)
        return tirx.IfThenElse(cond, then, other)

    def on_bind(self, s: Any, m: Any) -> Any:
        value = m.mutate(s.value)
        if not C.collect(value, tvm.ir.TensorLoad):
            self.ana.bind(s.var, value, allow_override=True)
        return tirx.Bind(s.var, value)

    def on_store(self, s: Any, m: Any) -> Any:
        indices = [m.mutate(i) for i in s.indices]
        cond = self.in_bounds(s.buffer, indices) if s.buffer in self.buffers else None
        if cond is None:
            return tirx.BufferStore(s.buffer, m.mutate(s.value), indices)
        with self.assuming(cond):  # loads at the same indices need no second guard
            value = m.mutate(s.value)
        lanes = _index_lanes(indices)
        if lanes == 1:
            return tirx.IfThenElse(cond, tirx.BufferStore(s.buffer, value, indices), None)
        # a vector store at the edge: the whole vector when every lane fits, else lane by lane (the lanes inside
        # the buffer are still written)
        edge_value = m.mutate(s.value)  # outside the all-lanes condition: its loads guard themselves
        per_lane = []
        for lane in range(lanes):
            lane_indices = _lane_indices(indices, lane)
            lane_value = _lane(edge_value, lane) if _lanes(edge_value) > 1 else edge_value
            store = tirx.BufferStore(s.buffer, lane_value, lane_indices)
            lane_cond = self._scalar_in_bounds(s.buffer, lane_indices)
            per_lane.append(store if lane_cond is None else tirx.IfThenElse(lane_cond, store, None))
        return tirx.IfThenElse(cond, tirx.BufferStore(s.buffer, value, indices), tirx.SeqStmt(per_lane))

    def on_eval(self, s: Any, m: Any) -> Any:
        value = m.mutate(s.value)
        conds = []
        if isinstance(value, tvm.ir.Call):
            for arg in value.args:
                if isinstance(arg, tvm.ir.Call) and _op_name(arg) == "tirx.address_of":
                    target = arg.args[0]
                    if isinstance(target, tvm.ir.TensorLoad) and target.source in self.buffers:
                        cond = self.in_bounds(target.source, list(target.indices))
                        if cond is not None:
                            conds.append(cond)
        stmt = tirx.Evaluate(value)
        cond = _conj(conds)
        return stmt if cond is None else tirx.IfThenElse(cond, stmt, None)

    # ------------------------------------------------------------------ expressions
    def on_load(self, ld: Any, m: Any) -> Any:
        indices = [m.mutate(i) for i in ld.indices]
        load = tirx.BufferLoad(ld.source, indices)
        if ld.source not in self.buffers:
            return load
        cond = self.in_bounds(ld.source, indices)
        if cond is None:
            return load
        lanes = _index_lanes(indices)
        if lanes == 1:
            return tirx.if_then_else(cond, load, tirx.const(0, _dtype(load)))
        # a vector load at the edge: the whole vector when every lane fits, else lane by lane (lanes past the
        # edge read 0, the others their element)
        scalar = str(tvm.DataType(_dtype(load)).with_lanes(1))
        per_lane = []
        for lane in range(lanes):
            lane_indices = _lane_indices(indices, lane)
            lane_load = tirx.BufferLoad(ld.source, lane_indices)
            lane_cond = self._scalar_in_bounds(ld.source, lane_indices)
            per_lane.append(lane_load if lane_cond is None
                            else tirx.if_then_else(lane_cond, lane_load, tirx.const(0, scalar)))
        lanes_vec = tirx.Shuffle(per_lane, [tirx.const(i, "int32") for i in range(lanes)])
        return tirx.if_then_else(cond, load, lanes_vec)

    def on_call(self, call: Any, m: Any) -> Any:
        name = _op_name(call)
        if name in _POINTER_OPS:
            return call
        if name == _IF_THEN_ELSE:
            cond = m.mutate(call.args[0])
            with self.assuming(cond):
                then = m.mutate(call.args[1])
            with self.assuming(tirx.Not(cond)):
                other = m.mutate(call.args[2])
            return tirx.if_then_else(cond, then, other)
        return m.default_mutate(call)

    def run(self, body: Any) -> Any:
        return tvm_ffi.structural_mutate(body, [
            (tirx.AttrStmt, self.on_attr), (tirx.For, self.on_for), (tirx.IfThenElse, self.on_if),
            (tirx.Bind, self.on_bind), (tirx.BufferStore, self.on_store), (tirx.Evaluate, self.on_eval),
            (tvm.ir.TensorLoad, self.on_load), (tvm.ir.Call, self.on_call),
        ])


def LegalizeSafeMemoryAccess(target: Any = None) -> tvm.transform.Pass:
    """Guard global-memory accesses the analyzer cannot prove in bounds (see the module docstring)."""

    @C.prim_func_pass("tl.LegalizeSafeMemoryAccess")
    def legalize_safe_memory_access(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        if current_tl_config("tl.disable_safe_memory_legalize", False):
            return func
        guard = _Guard(func)
        if not guard.buffers:
            return func
        body = guard.run(func.body)
        return C.with_body(func, body) if guard.added else func

    return legalize_safe_memory_access
