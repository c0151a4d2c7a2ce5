"""LegalizeScopes: give every allocation a storage scope TVM's Metal codegen can declare.

Metal threadgroup memory is sized at compile time and the codegen rejects ``"shared.dyn"`` ("Unknown storage
scope") and ``"local.fragment"``. Core's PlanSharedMemory already turns shared tiles static when the target's
``static_shared_memory`` option is set; this pass (run right after it) catches any tile a later or third-party
lowering introduced: ``"shared.dyn"`` becomes ``"shared"`` and a leftover ``"local.fragment"`` (already one
whole copy per thread at this point) becomes ``"local"``.
"""

from __future__ import annotations

from typing import Any

import tvm

RENAMES = {"shared.dyn": "shared", "local.fragment": "local"}


def LegalizeScopes(target: Any = None) -> tvm.transform.Pass:
    """Rewrite ``shared.dyn`` -> ``shared`` and ``local.fragment`` -> ``local`` (see the module docstring)."""
    from tilelang.transform import _common as C

    @C.prim_func_pass("metal.LegalizeScopes")
    def legalize_scopes(func: Any, mod: Any, ctx: Any) -> Any:
        remap = {}
        for alloc in C.allocations(func.body):
            scope = C.scope_of(alloc.buffer)
            if scope in RENAMES:
                remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope=RENAMES[scope])
        return C.with_body(func, C.substitute(func.body, remap)) if remap else func

    return legalize_scopes
