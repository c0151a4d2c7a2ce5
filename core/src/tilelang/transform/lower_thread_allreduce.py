"""LowerThreadAllreduce: TVM's ``tvm_thread_allreduce`` (under a ``T.comm_reducer`` ``reduce_scope``), which
programs may call directly (the reference's dequantising GEMV reduces its partial dot products over
``threadIdx.x`` so), lowered by TVM's own pass: warp shuffles where the target has them, shared memory otherwise,
with the barriers it needs placed by the pass itself. It runs after InsertBarriers, as in TVM's pipeline, and only
on functions that make the call; a target without threads gets a LoweringError naming the construct."""

from __future__ import annotations

from typing import Any

import tvm

from tilelang.transform import utils as C

ALLREDUCE = "tirx.tvm_thread_allreduce"


def _calls_allreduce(func: Any) -> bool:
    return bool(C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == ALLREDUCE))


def bind_thread_loops(body: Any, launches: dict[str, tuple[Any, int | None]]) -> Any:
    """`body` with each ``for v in T.thread_binding(n, thread=tag)`` whose tag `launches` maps to the launch's
    ``(variable, n)`` replaced by its body on that variable (the loop names the launch's threads)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any, m: Any) -> Any:
        loop = m.default_mutate(loop)
        binding = loop.thread_binding
        if loop.kind != tirx.ForKind.THREAD_BINDING or binding is None:
            return loop
        var, extent = launches.get(str(binding.thread_tag), (None, None))
        if var is None or extent != C.as_int(loop.extent) or not C.is_const(loop.min, 0):
            return loop
        return C.substitute(loop.body, {loop.loop_var: var})

    return tvm_ffi.structural_mutate(body, [(tirx.For, on_for)])


def _launches(func: Any) -> dict[str, tuple[Any, int | None]]:
    from tvm import tirx

    found = C.collect(func.body, tirx.AttrStmt, lambda a: str(a.attr_key) == "thread_extent")
    return {str(a.node.thread_tag): (a.node.var, C.as_int(a.value)) for a in found}


def LowerThreadAllreduce(target: Any = None) -> tvm.transform.Pass:
    """Lower ``tvm_thread_allreduce`` calls (see the module docstring)."""
    from tvm import s_tir

    lower = s_tir.transform.LowerThreadAllreduce()

    @tvm.transform.module_pass(opt_level=0, name="tl.LowerThreadAllreduce")
    def lower_allreduce(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
        using = [gv for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc) and _calls_allreduce(f)]
        if not using:
            return mod
        if target is not None and not C.has_threads(target):
            raise C.lowering_error(mod[using[0]], "T.tvm_thread_allreduce reduces across the threads of a block; "
                                                  f"target {target.kind.name} runs a block as one thread: use "
                                                  "T.reduce_sum / T.reduce on a fragment instead")
        for gv in using:
            mod[gv] = C.with_body(mod[gv], bind_thread_loops(mod[gv].body, _launches(mod[gv])))
        return lower(mod)

    return lower_allreduce
