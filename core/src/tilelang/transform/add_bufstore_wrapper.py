"""AddWrapperForSingleBufStore: a lone store that touches a fragment becomes ``T.Parallel(1)``.

A statement such as ``acc[0] = x`` written directly in a kernel body (outside any ``T.Parallel`` or
``T.Pipelined`` loop, and not indexed by a thread variable) touches a ``local.fragment`` tile, but layout
inference and thread partitioning only handle fragment accesses inside parallel loops. This pass wraps each such
store in a one-iteration parallel loop so it follows the same path. Only element 0 of a fragment can be reached
this way: a constant non-zero index is a ValueError.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["AddWrapperForSingleBufStore"]

_STAGES_ANNS = ("tl.pipeline_stages", "num_stages")


def _is_tile_loop(loop: Any) -> bool:
    return loop.kind == tirx.ForKind.PARALLEL or C.is_parallel(loop) or any(k in loop.annotations
                                                                            for k in _STAGES_ANNS)


def _fragment_accesses(store: Any) -> list[tuple[Any, list[Any]]]:
    accesses = [(store.buffer, list(store.indices))]
    accesses += [(ld.source, list(ld.indices)) for ld in C.collect(store.value, tvm.ir.TensorLoad)]
    for index in store.indices:
        accesses += [(ld.source, list(ld.indices)) for ld in C.collect(index, tvm.ir.TensorLoad)]
    return [(buf, idx) for buf, idx in accesses if C.scope_of(buf) == "local.fragment"]


def AddWrapperForSingleBufStore(target: Any = None) -> tvm.transform.Pass:
    """Wrap lone fragment stores in ``T.Parallel(1)`` (see the module docstring)."""

    @C.prim_func_pass("tl.AddWrapperForSingleBufStore")
    def wrap(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        depth = [0]
        thread_vars: list[Any] = []

        def on_for(loop: Any, mutator: Any) -> Any:
            if loop.kind == tirx.ForKind.THREAD_BINDING:
                thread_vars.append(loop.loop_var)
            tile = _is_tile_loop(loop)
            depth[0] += tile
            try:
                return mutator.default_mutate(loop)
            finally:
                depth[0] -= tile

        def on_attr(attr: Any, mutator: Any) -> Any:
            if attr.attr_key == "thread_extent" and isinstance(attr.node, tirx.IterVar):
                thread_vars.append(attr.node.var)
            return mutator.default_mutate(attr)

        def on_store(store: Any, mutator: Any) -> Any:
            if depth[0] or C.uses_var(store, thread_vars):
                return store
            fragments = _fragment_accesses(store)
            if not fragments:
                return store
            for buf, indices in fragments:
                for index in indices:
                    if isinstance(index, tirx.IntImm) and int(index.value) != 0:
                        raise ValueError(f"Fragment buffer access with non-zero index [{index}] is not supported. "
                                         f"Only fragment[0] access is allowed (buffer {buf.name}).")
            return tirx.For(tirx.Var("_", "int32"), 0, 1, tirx.ForKind.PARALLEL, store,
                            annotations={C.PARALLEL_ANN: 1})

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.AttrStmt, on_attr),
                                                     (tirx.BufferStore, on_store)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return wrap
