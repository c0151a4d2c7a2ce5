"""`FragmentExtents` (CPU, extension point ``pre_layout``): a fragment indexed past its declared shape gets room
for those indices.

On a GPU a fragment is per-thread registers laid out by layout inference from the loops that use it, so a
``T.Parallel(block_M)`` loop that writes ``sinks[i]`` of a fragment declared ``[heads]`` gives every ``i`` its own
register, and a later loop reading ``sinks[i]`` gets the value back: the reference TileLang's attention-sink
backward examples rely on it. The CPU stores a fragment as one array of its declared shape, where those indices
would write past its end. So each fragment dimension of constant extent grows to cover every index a load or
store provably reaches (bounds from the enclosing loops and launch extents); an index with no provable bound, or
an access under a condition (``if``, ``T.if_then_else``: a guard may keep it in range), leaves the dimension
alone. Results of in-range programs are unchanged.
"""

from __future__ import annotations

from typing import Any


def FragmentExtents(target: Any = None) -> Any:
    """Grow fragments to the indices their loads and stores reach (see the module docstring)."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    @C.prim_func_pass("cpu.fragment_extents")
    def fragment_extents(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        fragments = {a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) == "local.fragment"}
        if not fragments:
            return func
        ana = tvm.sym.Analyzer()

        def bind_loop(loop: Any) -> None:
            ana.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))

        def bind_launch(s: Any) -> None:
            if str(s.attr_key) == "thread_extent":
                ana.bind(s.node.var, tvm.ir.Range.from_min_extent(0, s.value))

        C.walk(func.body, [(tirx.For, bind_loop), (tirx.AttrStmt, bind_launch)])
        guarded: set[Any] = set()  # accesses a condition may keep in range

        def guard(node: Any) -> None:
            guarded.update(C.collect(node, tvm.ir.TensorLoad))
            guarded.update(C.collect(node, tirx.BufferStore))

        def on_call(call: Any) -> None:
            if isinstance(call.op, tvm.ir.Op) and str(call.op.name) in ("tirx.if_then_else", "prim.if_then_else"):
                guard(call)

        C.walk(func.body, [(tirx.IfThenElse, guard), (tirx.Select, guard), (tvm.ir.Call, on_call)])
        reach: dict[Any, list[int]] = {}

        def note(node: Any, buf: Any, indices: Any) -> None:
            if buf not in fragments or node in guarded:
                return
            ends = reach.setdefault(buf, [C.as_int(s) or 0 for s in buf.ty.shape])
            for d, index in enumerate(indices):
                if d < len(ends) and C.as_int(buf.ty.shape[d]) is not None:
                    top = ana.const_int_bound(index).max_value
                    if top < (1 << 40):  # a provable bound
                        ends[d] = max(ends[d], int(top) + 1)

        C.walk(func.body, [(tvm.ir.TensorLoad, lambda ld: note(ld, ld.source, ld.indices)),
                           (tirx.BufferStore, lambda st: note(st, st.buffer, st.indices))])
        remap = {buf: C.buffer_with(buf, shape=[tirx.IntImm("int32", e) for e in ends])
                 for buf, ends in reach.items() if ends != [C.as_int(s) for s in buf.ty.shape]}
        return C.with_body(func, C.substitute(func.body, remap)) if remap else func

    return fragment_extents
