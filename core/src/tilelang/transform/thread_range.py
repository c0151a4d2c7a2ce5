"""Which threads of a block run a statement: the thread range of a branch on the thread index (warp roles).

Warp-specialised kernels split a block with conditions on the thread index (``if tx < 128: ... elif 128 <= tx <
256: ...``, ``if tx // 32 == 2``). Inside such a branch only a contiguous slice ``[begin, begin + count)`` of the
block runs, and the code there must treat that slice as its threads (the reference TileLang does the same): a
parallel loop is split over ``count`` threads indexed from ``begin``, a fragment used only there is distributed
over them, and a shared-memory barrier there synchronises only them (a named barrier).

`thread_range(conditions, tid, threads)` decides the slice from the enclosing branch conditions; `walk_ranges`
rebuilds a statement while giving a callback the slice of every node it visits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

FULL = "full"


def _atoms(cond: Any) -> list[Any]:
    """The conjuncts of `cond` (``a and b`` split, recursively)."""
    if isinstance(cond, tirx.And):
        return _atoms(cond.a) + _atoms(cond.b)
    return [cond]


def _has_loads(expr: Any) -> bool:
    return bool(C.collect(expr, tvm.ir.TensorLoad))


def thread_range(conditions: Sequence[Any], tid: Any, threads: int) -> tuple[int, int] | None:
    """``(begin, count)``: the threads of a block of `threads` threads (linear index `tid`, a Var) that satisfy
    every condition of `conditions` whose value depends on the thread, when they are a contiguous slice;
    ``(0, threads)`` when none depends on it; None when the set is not provably a contiguous slice (a condition that
    reads memory through the thread index, ``tx % 2 == 0``, ...). Conditions free of the thread index are the same
    for the whole block (a block runs them all or none) and impose nothing."""
    atoms = [a for c in conditions for a in _atoms(c) if C.uses_var(a, [tid])]
    if not atoms:
        return (0, threads)
    if any(_has_loads(a) for a in atoms):
        return None
    ana = tvm.sym.Analyzer()
    ana.bind(tid, tvm.ir.Range.from_min_extent(0, threads))
    scopes = [ana.constraint_scope(a) for a in atoms]
    for s in scopes:
        s.__enter__()
    try:
        bound = ana.const_int_bound(tid)
        lo, hi = int(bound.min_value), int(bound.max_value)
    finally:
        for s in reversed(scopes):
            s.__exit__(None, None, None)
    check = tvm.sym.Analyzer()
    check.bind(tid, tvm.ir.Range.from_min_extent(lo, hi - lo + 1))
    if hi >= lo and all(check.can_prove(a) for a in atoms):
        return (lo, hi - lo + 1)
    return _enumerated(atoms, tid, threads)


def _enumerated(atoms: list[Any], tid: Any, threads: int) -> tuple[int, int] | None:
    """The slice of thread indices for which every atom simplifies to true (``tx // 32 == 2``, which the
    analyzer's bounds do not see through), or None when it is not one or an atom stays symbolic."""
    ana = tvm.sym.Analyzer()
    inside = []
    for t in range(threads):
        values = [ana.simplify(C.substitute(a, {tid: tirx.const(t, str(tid.ty))})) for a in atoms]
        if any(C.as_int(v) is None for v in values):
            return None
        if all(C.as_int(v) for v in values):
            inside.append(t)
    if not inside or inside[-1] - inside[0] + 1 != len(inside):
        return None
    return (inside[0], len(inside))


def walk_ranges(body: Any, tid: Any, threads: int, visit: Callable[[Any, Any, tuple[int, int] | None], Any],
                types: tuple[type, ...]) -> Any:
    """`body` rebuilt with every node of `types` replaced by ``visit(node, mutator, range)``, `range` being the
    `thread_range` of the branch conditions around the node (let-bound names substituted)."""
    conds: list[Any] = []
    lets: dict[Any, Any] = {}
    spans: list[tuple[int, int] | None] = [(0, threads)]  # the range of each enclosing branch, computed once

    def enter(cond: Any) -> None:
        conds.append(cond)
        if not C.uses_var(cond, [tid, *lets]):  # the same for the whole block: the range stays
            spans.append(spans[-1])
            return
        spans.append(thread_range([C.substitute(c, lets) if lets else c for c in conds], tid, threads))

    def leave() -> None:
        conds.pop()
        spans.pop()

    def on_if(s: Any, m: Any) -> Any:
        cond = m.mutate(s.condition)
        enter(cond)
        then = m.mutate(s.then_case)
        leave()
        other = None
        if s.else_case is not None:
            enter(tirx.Not(cond))
            other = m.mutate(s.else_case)
            leave()
        return tirx.IfThenElse(cond, then, other)

    def on_let(s: Any, m: Any) -> Any:
        if C.uses_var(s.value, [tid]):
            lets[s.var] = s.value
        return m.default_mutate(s)

    def on_node(s: Any, m: Any) -> Any:
        return visit(s, m, spans[-1])

    callbacks = [(t, on_node) for t in types] + [(tirx.IfThenElse, on_if), (tirx.LetStmt, on_let),
                                                 (tirx.Bind, on_let)]
    return tvm_ffi.structural_mutate(body, callbacks)


def single_thread_var(func: Any) -> Any:
    """The block's only thread variable with an extent above 1 (``threadIdx.x`` of a 1-D block), else None:
    thread ranges are decided for 1-D blocks."""
    found = [(var, ext) for var, ext in (C.launch_extents(func).get(t, (None, None)) for t in C.THREAD_TAGS)
             if var is not None and C.as_int(ext) != 1]
    return found[0][0] if len(found) == 1 else None
