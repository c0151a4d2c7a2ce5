"""BarrierAllocations: core's ``T.alloc_barrier`` tiles as CUDA mbarriers.

Core's language allocates barriers as a ``uint64`` tile in scope ``shared.barrier`` whose allocation carries the
arrival counts (``AllocBuffer`` annotation ``tl.barrier_init``). Here each such tile becomes a static
``__shared__`` array (scope ``shared``, never part of the dynamic pool) followed by its initialisation:
``tl.init_barriers(tile[0], counts...)``, which `tilelang_cuda.tileops.dialect` lowers to ``mbarrier.init`` of
every barrier by thread 0, ``fence.mbarrier_init`` and a block barrier. Runs first at ``pre_layout``.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

CORE_BARRIER_SCOPE = "shared.barrier"
BARRIER_INIT_ANN = "tl.barrier_init"


def BarrierAllocations(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.barrier_allocations")
    def barrier_allocations(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        allocs = [a for a in C.allocations(func.body) if C.scope_of(a.buffer) == CORE_BARRIER_SCOPE]
        if not allocs:
            return func
        from tilelang.ir import intrin_call, register_intrinsic

        register_intrinsic("tl.init_barriers", "opaque", "CUDA dialect: initialise a tile of mbarriers")
        remap = {a.buffer: C.buffer_with(a.buffer, scope="shared") for a in allocs}

        def on_alloc(a: Any, m: Any) -> Any:
            if a.buffer not in remap:
                return m.default_mutate(a)
            new = remap[a.buffer]
            counts = list((a.annotations or {}).get(BARRIER_INIT_ANN, []))
            if not counts:
                raise C.lowering_error(func, f"barrier tile {a.buffer.name} has no arrival counts (T.alloc_barrier)")
            init = intrin_call("tl.init_barriers", "handle",
                               [tirx.BufferLoad(new, [tirx.IntImm("int32", 0)]), *counts])
            rest = {k: v for k, v in (a.annotations or {}).items() if str(k) != BARRIER_INIT_ANN}
            return C.seq([tirx.AllocBuffer(new, rest or None), tirx.Evaluate(init)])

        body = tvm_ffi.structural_mutate(func.body, [(tirx.AllocBuffer, on_alloc)])
        return C.with_body(func, C.substitute(body, remap))

    return barrier_allocations
