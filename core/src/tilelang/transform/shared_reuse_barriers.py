"""BarrierBeforeSharedReuse: a block barrier wherever a shared tile's storage may be handed to a later tile.

TVM's ``StorageRewrite`` and ``MergeSharedMemoryAllocations`` give a shared tile whose last access is behind
the bytes of a tile first accessed later, viewing them with the later tile's dtype. The barrier analysis
(`InsertBarriers`, TVM's ``ThreadSync``) then sees one buffer and takes two accesses with the same index
expression for the same thread's -- true when both tiles have the same element type, false when a ``float16``
tile reuses a ``float32`` one: thread 1's ``half`` element 1 is thread 0's ``float`` element 0. Found by the
fuzzer: a dead ``float32`` tile written by two threads, then a ``float16`` tile in its bytes, no barrier between.

So before any reuse is decided, this pass puts ``tvm_storage_sync("shared")`` between the last statement that
touches a tile and the first that touches a later one, in the statement sequence where both tiles are used
(under the kernel's launches, the level at which the storage planners decide), unless a block barrier already
separates them. Loops and branches are not looked into: a tile used inside a loop body lives across its
iterations, and a barrier may not be put inside a branch that only some threads take. Typical kernels have a
barrier at these points already or pay one after their main loop.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import utils as C

_SHARED = ("shared", "shared.dyn")


def _is_block_barrier(stmt: Any) -> bool:
    if not isinstance(stmt, tirx.Evaluate):
        return False
    call = stmt.value
    return (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op)
            and call.op.name == "tirx.tvm_storage_sync" and str(getattr(call.args[0], "value", "")) in _SHARED
            and (len(call.args) == 1 or C.as_int(call.args[-1]) == -1))  # not a named barrier of some threads


def _barrier() -> Any:
    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", tvm.ir.StringImm("shared")))


def _shared_roots(body: Any) -> list[tuple[Any, Any]]:
    """``(buffer, root allocation)`` for every shared tile of `body` and every buffer declared over one."""
    roots: list[tuple[Any, Any]] = [(a.buffer, a.buffer) for a in C.allocations(body)
                                    if C.scope_of(a.buffer) in _SHARED]

    def on_decl(decl: Any) -> None:
        data = decl.data
        if isinstance(data, tvm.ir.Call) and data.args:
            for buf, root in roots:
                if data.args[0].same_as(buf):
                    roots.append((decl.buffer, root))
                    return

    C.walk(body, [(tirx.DeclBuffer, on_decl)])
    return roots


def _touched(stmt: Any, roots: list[tuple[Any, Any]]) -> list[Any]:
    """The root allocations whose storage `stmt` accesses (declarations are no access)."""
    if isinstance(stmt, (tirx.AllocBuffer, tirx.DeclBuffer)):
        return []
    found: list[Any] = []

    def on_var(v: Any) -> None:
        for buf, root in roots:
            if v.same_as(buf) and not any(root.same_as(f) for f in found):
                found.append(root)

    C.walk(stmt, [(tvm.ir.Var, on_var)])
    return found


def _separate(stmt: Any, roots: list[tuple[Any, Any]], outside: list[Any]) -> Any:
    """`stmt` with barriers before each first use of a tile that follows the last use of another."""
    if isinstance(stmt, tirx.AttrStmt):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _separate(stmt.body, roots, outside), stmt.span)
    if not isinstance(stmt, tirx.SeqStmt):
        return stmt
    children = list(stmt.seq)
    touched = [[r for r in _touched(c, roots) if not any(r.same_as(o) for o in outside)] for c in children]
    first: list[tuple[Any, int]] = []
    last: dict[int, int] = {}  # index into `first` -> last child touching that tile
    for i, roots_here in enumerate(touched):
        for r in roots_here:
            k = next((n for n, (f, _) in enumerate(first) if f.same_as(r)), None)
            if k is None:
                first.append((r, i))
                k = len(first) - 1
            last[k] = i
    barriers = [i for i, c in enumerate(children) if _is_block_barrier(c)]
    before: set[int] = set()
    for j in sorted({i for _, i in first}):
        ended = [last[k] for k, (_, i) in enumerate(first) if last[k] < j]
        if ended and not any(max(ended) < b < j for b in barriers) and not any(
                max(ended) < b <= j for b in before):
            before.add(j)
    out: list[Any] = []
    for i, child in enumerate(children):
        if i in before:
            out.append(_barrier())
        # tiles also used by other children live across this one: only the child's own tiles are paired inside
        others = [r for n, t in enumerate(touched) if n != i for r in t]
        out.append(_separate(child, roots, outside + others))
    return C.seq(out)


def BarrierBeforeSharedReuse(target: Any = None) -> tvm.transform.Pass:
    """Separate the accesses of shared tiles whose lifetimes follow each other (see the module docstring)."""

    @C.prim_func_pass("tl.BarrierBeforeSharedReuse")
    def barrier_before_shared_reuse(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        if tgt is not None and not C.has_threads(tgt):
            return func
        roots = _shared_roots(func.body)
        if sum(1 for buf, root in roots if buf.same_as(root)) < 2:
            return func
        return C.with_body(func, _separate(func.body, roots, []))

    return barrier_before_shared_reuse
