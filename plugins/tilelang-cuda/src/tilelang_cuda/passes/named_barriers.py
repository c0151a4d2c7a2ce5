"""NamedBarriers: the barriers core's InsertBarriers puts inside warp-role branches become ``bar.sync id, count``.

``tvm_storage_sync("shared", id, count)`` (a barrier of the ``count`` threads of one thread-index branch, see
`tilelang.transform.insert_barriers`) would print as ``__syncthreads()`` through TVM's CUDA code generator, which
deadlocks or is undefined when only part of the block reaches it; it becomes the ``tl_named_barrier_sync(id,
count)`` helper instead. Runs at ``post_barriers``.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C


def _named(ev: Any) -> Any:
    call = ev.value
    if (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_storage_sync"
            and len(call.args) == 3 and str(call.args[0].value) in ("shared", "shared.dyn")):
        return tirx.Evaluate(tirx.call_extern("void", "tl_named_barrier_sync", call.args[1], call.args[2]))
    return ev


def NamedBarriers(target: Any = None) -> tvm.transform.Pass:
    """Lower partial block barriers to named barriers (see the module docstring)."""

    @C.prim_func_pass("cuda.named_barriers")
    def named_barriers(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.Evaluate, _named)))

    return named_barriers
