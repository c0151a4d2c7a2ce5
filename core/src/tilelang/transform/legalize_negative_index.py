"""LegalizeNegativeIndex: a buffer index that is negative wherever it is evaluated counts from the end.

``A[-1]`` is ``A[n - 1]`` and ``A[-i - 1]`` inside ``for i in range(4)`` is ``A[n - 1 - i]`` (Python's meaning
of a negative index), when the analyzer proves the index negative over the ranges of the enclosing loops. An
index that may be either sign (``A[shift + i]``) is left as written.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C


def _legal(indices: list[Any], shape: list[Any], analyzer: Any) -> tuple[list[Any], bool]:
    out, changed = [], False
    for index, extent in zip(indices, shape):
        if isinstance(index, tirx.Ramp) or str(index.ty.dtype) == "bool":
            out.append(index)
            continue
        if analyzer.can_prove(index < 0):
            out.append(analyzer.simplify(index + extent))
            changed = True
        else:
            out.append(index)
    return out, changed


def LegalizeNegativeIndex(target: Any = None) -> tvm.transform.Pass:
    """Rewrite provably negative buffer indices (see the module docstring)."""

    @C.prim_func_pass("tl.LegalizeNegativeIndex")
    def legalize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        analyzer = tvm.sym.Analyzer()

        def on_for(loop: Any, mutator: Any) -> Any:
            analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
            return mutator.default_mutate(loop)

        def on_load(load: Any, mutator: Any) -> Any:
            load = mutator.default_mutate(load)
            indices, changed = _legal(list(load.indices), list(load.source.ty.shape), analyzer)
            return tirx.BufferLoad(load.source, indices) if changed else load

        def on_store(store: Any, mutator: Any) -> Any:
            store = mutator.default_mutate(store)
            indices, changed = _legal(list(store.indices), list(store.buffer.ty.shape), analyzer)
            return tirx.BufferStore(store.buffer, store.value, indices) if changed else store

        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tvm.ir.TensorLoad, on_load),
                                                     (tirx.BufferStore, on_store)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return legalize
