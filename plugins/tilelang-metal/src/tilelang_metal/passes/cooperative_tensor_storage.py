"""``metal.cooperative_tensor_storage`` (`CooperativeTensorStorage`): cooperative tensors become lane registers.

``T.alloc_local((n,), dtype, scope="metal.cooperative_tensor")`` holds `n` elements spread over a simdgroup's
32 lanes; after ``T.cooperative_tensor_*`` are lowered (`tilelang_metal.tileops.cooperative_tensor`, which index
the lane's elements) the allocation becomes a ``local`` array of ``n / 32`` elements, which TVM's Metal codegen
declares as ``thread T name[n / 32]``. A buffer that cannot be one (not one-dimensional, `n` not a multiple of
64, a dtype other than float16 / bfloat16 / float32) is a LoweringError at its allocation.
"""

from __future__ import annotations

from typing import Any

import tvm


def CooperativeTensorStorage(target: Any = None) -> tvm.transform.Pass:
    """Give every ``metal.cooperative_tensor`` allocation ``n / 32`` per-lane elements of scope ``local``."""
    from tilelang.transform import utils as C
    from tilelang_metal.tileops.cooperative_tensor import LANES, storage_problem
    from tilelang_metal.utils import COOPERATIVE_TENSOR_SCOPE

    @C.prim_func_pass("metal.cooperative_tensor_storage")
    def cooperative_tensor_storage(func: Any, mod: Any, ctx: Any) -> Any:
        remap = {}
        for alloc in C.allocations(func.body):
            buf = alloc.buffer
            if C.scope_of(buf) != COOPERATIVE_TENSOR_SCOPE:
                continue
            problem = storage_problem(buf)
            if problem:
                raise C.lowering_error_at(func, getattr(buf, "span", None) or getattr(alloc, "span", None), problem)
            n = int(C.as_int(buf.ty.shape[0]))
            remap[buf] = C.buffer_with(buf, shape=[n // LANES], scope="local")
        return C.with_body(func, C.substitute(func.body, remap)) if remap else func

    return cooperative_tensor_storage
