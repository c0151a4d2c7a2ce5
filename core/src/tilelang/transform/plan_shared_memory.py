"""PlanSharedMemory: give shared tiles the storage scope the target can allocate.

``T.alloc_shared`` emits ``"shared.dyn"`` (one dynamically sized pool per block, sized at launch). Targets
whose ``pipeline_options["static_shared_memory"]`` is true (Metal, WebGPU: their codegens need compile-time
sizes) get ``"shared"`` instead. The pass also records the block's shared bytes in the function attribute
``tl.shared_bytes`` (static sizes only) for the artifact's metadata.
"""

from __future__ import annotations

import re
from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import utils as C

_BITS = {"bool": 8}
_TINY_BYTES = 4


_DTYPE = re.compile(r"^(?:u?int|float|bfloat)(\d+)(?:_\w+?)?(?:x(\d+))?$")


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of `dtype` (vector lanes included; sub-byte types round up to one byte): the
    width is the number right after the type class (``float8_e4m3fn``: 8 bits), not every digit of the name."""
    if dtype in _BITS:
        return _BITS[dtype] // 8
    m = _DTYPE.match(dtype)
    if m is None:
        bits, lanes = 32, 1
    else:
        bits, lanes = int(m.group(1)), int(m.group(2) or 1)
    return max(1, bits // 8) * lanes


def PlanSharedMemory(target: Any = None) -> tvm.transform.Pass:
    """Rewrite shared scopes for the target and count shared bytes (see the module docstring)."""

    @C.prim_func_pass("tl.PlanSharedMemory")
    def plan_shared_memory(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        static = bool(C.pipeline_options(tgt).get("static_shared_memory", False)) if tgt is not None else False
        remap = {}
        total = 0
        for alloc in C.allocations(func.body):
            buf = alloc.buffer
            scope = C.scope_of(buf)
            if scope not in ("shared", "shared.dyn"):
                continue
            n = C.num_elements(buf.ty.shape)
            width = dtype_bytes(str(buf.ty.dtype))
            if static and scope == "shared.dyn":
                remap[buf] = C.buffer_with(buf, scope="shared")
            elif scope == "shared.dyn" and n is not None and n * width <= _TINY_BYTES:
                # TVM's MergeSharedMemoryAllocations loses the offset of a pool member of 4 bytes or less
                # ("buffer_byte_offsets" check): give it 8 (its accesses stay in the first elements)
                n = -(-2 * _TINY_BYTES // width)
                remap[buf] = C.buffer_with(buf, shape=[n] if len(buf.ty.shape) == 1 else [n, *[1] * (
                    len(buf.ty.shape) - 1)])
            if n is not None:
                total += n * width
        out = C.with_body(func, C.substitute(func.body, remap))
        return out.with_attr("tl.shared_bytes", total) if total else out

    return plan_shared_memory
