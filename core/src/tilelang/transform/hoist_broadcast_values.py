"""HoistBroadcastValues: constant broadcasts get their scalar from a variable bound just before the statement.

``A[i:i+4] = B[i:i+4] + T.Broadcast(3.14, 4)`` becomes ``v = 3.14; A[i:i+4] = B[i:i+4] + T.Broadcast(v, 4)``:
each broadcast of an integer or float literal inside a store or a ``Bind`` gets a fresh ``Bind`` placed right
before that statement. Some device compilers fold a vector literal into a constant-pool load per use; a
variable is splatted once.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["HoistBroadcastValues"]


def _hoist(node: Any) -> tuple[Any, list[Any]]:
    """`node` with every literal broadcast reading a fresh variable, and the Binds defining them."""
    binds: list[Any] = []

    def on_broadcast(b: Any) -> Any:
        if isinstance(b.value, (tirx.IntImm, tirx.FloatImm)):
            var = tirx.Var("broadcast_var", str(b.value.ty.dtype))
            binds.append(tirx.Bind(var, b.value))
            return tirx.Broadcast(var, b.lanes)
        return b

    return tvm_ffi.structural_map(node, (tirx.Broadcast, on_broadcast)), binds


def HoistBroadcastValues(target: Any = None) -> tvm.transform.Pass:
    """Bind the scalar of each literal broadcast before its statement (see the module docstring)."""

    def on_store(store: Any, mutator: Any) -> Any:
        value, binds = _hoist(store.value)
        indices = []
        for index in store.indices:
            index, more = _hoist(index)
            indices.append(index)
            binds += more
        if not binds:
            return store
        return tirx.SeqStmt([*binds, tirx.BufferStore(store.buffer, value, indices)])

    def on_bind(bind: Any, mutator: Any) -> Any:
        value, binds = _hoist(bind.value)
        return tirx.SeqStmt([*binds, tirx.Bind(bind.var, value)]) if binds else bind

    @C.prim_func_pass("tl.HoistBroadcastValues")
    def hoist(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.BufferStore, on_store), (tirx.Bind, on_bind)])
        if body.same_as(func.body):
            return func
        # a Bind's scope is the rest of its sequence: splice the new sequences into their parents
        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.SeqStmt, lambda s: C.seq(s.seq))))

    return hoist
