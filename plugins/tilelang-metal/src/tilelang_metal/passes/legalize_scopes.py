"""``metal.legalize_scopes`` (`LegalizeScopes`): give every allocation a storage scope TVM's Metal codegen can declare.

Metal threadgroup memory is sized at compile time and the codegen rejects ``"shared.dyn"`` ("Unknown storage
scope") and ``"local.fragment"``. Core's PlanSharedMemory already turns shared tiles static when the target's
``static_shared_memory`` option is set; this pass (run right after it) catches any tile a later or third-party
lowering introduced: ``"shared.dyn"`` becomes ``"shared"`` and a leftover ``"local.fragment"`` (already one
whole copy per thread at this point) becomes ``"local"``. A barrier written for dynamic shared memory
(``T.tvm_storage_sync("shared.dyn")``, which the codegen would drop) becomes the threadgroup barrier
``tvm_storage_sync("shared")``: on Metal all shared memory is threadgroup memory.
"""

from __future__ import annotations

from typing import Any

import tvm

RENAMES = {"shared.dyn": "shared", "local.fragment": "local"}


def LegalizeScopes(target: Any = None) -> tvm.transform.Pass:
    """Rewrite ``shared.dyn`` -> ``shared`` and ``local.fragment`` -> ``local``, in allocations and in barriers (see
    the module docstring)."""
    import tvm_ffi

    from tilelang.transform import utils as C

    def on_call(call: Any) -> Any:
        if (isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_storage_sync" and call.args
                and isinstance(call.args[0], tvm.ir.StringImm) and str(call.args[0].value) in RENAMES):
            scope = tvm.ir.StringImm(RENAMES[str(call.args[0].value)])
            return tvm.ir.Call(call.op, [scope, *call.args[1:]], call.attrs, call.ty_args, call.span, ret_ty=call.ty)
        return call

    @C.prim_func_pass("metal.legalize_scopes")
    def legalize_scopes(func: Any, mod: Any, ctx: Any) -> Any:
        remap = {}
        for alloc in C.allocations(func.body):
            scope = C.scope_of(alloc.buffer)
            if scope in RENAMES:
                remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope=RENAMES[scope])
        body = tvm_ffi.structural_map(C.substitute(func.body, remap), (tvm.ir.Call, on_call))
        return func if body.same_as(func.body) else C.with_body(func, body)

    return legalize_scopes
