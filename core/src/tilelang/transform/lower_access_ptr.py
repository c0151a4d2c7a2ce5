"""LowerAccessPtr: each ``T.access_ptr`` (``tl.access_ptr(element, extent, rw_mask)``) becomes TVM's
``tvm_access_ptr`` of the element's buffer at the element's linear offset.

The front end keeps the element so passes still see which buffer a pointer reaches; LowerIntrinsics lowers the
same calls during the pipeline. This pass does only that rewrite, for tools and pipelines that want pointers in
TVM's form before (or without) the rest of the intrinsic lowering.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

__all__ = ["LowerAccessPtr"]


def _lower(call: Any) -> Any:
    if not (isinstance(call.op, tvm.ir.Op) and call.op.name == "tl.access_ptr"):
        return call
    from tilelang.tileop.intrinsics import linear_index

    element, extent, mask = call.args[0], call.args[1], C.as_int(call.args[2])
    if not isinstance(element, tvm.ir.TensorLoad) or mask is None:
        raise ValueError(f"tl.access_ptr expects (buffer element, extent, constant rw_mask), got {call}")
    buf = element.source
    return buf.access_ptr(mask, offset=linear_index(buf, list(element.indices)), extent=extent)


def LowerAccessPtr(target: Any = None) -> tvm.transform.Pass:
    """Lower ``tl.access_ptr`` calls to ``tvm_access_ptr`` (see the module docstring)."""

    @C.prim_func_pass("tl.LowerAccessPtr")
    def lower(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        body = tvm_ffi.structural_map(func.body, (tvm.ir.Call, _lower))
        return func if body.same_as(func.body) else C.with_body(func, body)

    return lower
