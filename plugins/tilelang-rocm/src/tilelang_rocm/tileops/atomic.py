"""Atomics on AMD GPUs (``tl.atomic`` and the element intrinsics ``T.atomic_add(B[i], v)`` ...): core's lowerings,
with each update calling a typed helper of `device_lib/atomics.ll`.

LLVM code cannot call ``atomicAdd``: the helpers ``tl_atomic_<add|max|min>_<global|shared>_<f32|i32|u32>``
are single ``atomicrmw`` instructions in LLVM IR that TVM's ROCm codegen links into the kernel.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import TileOpImpl, lower_atomic

PLACEHOLDER = "tl_atomic_"  # pipeline_options["atomic_functions"] names: tl_atomic_add / _max / _min
TYPES = {"float32": "f32", "int32": "i32", "uint32": "u32"}
SPACES = {"global": "global", "shared": "shared", "shared.dyn": "shared"}


def _typed(call: Any, ctx: Any) -> Any:
    name = str(call.args[0].value) if isinstance(call.args[0], tvm.ir.StringImm) else ""
    if not name.startswith(PLACEHOLDER):
        return call
    addr = call.args[1]
    buf = addr.args[0].source if isinstance(addr, tvm.ir.Call) and addr.args else None
    scope = str(buf.ty.storage_scope) if buf is not None else "global"
    dtype = str(call.ty.dtype) if hasattr(call, "ty") else str(call.dtype)
    if dtype not in TYPES or scope not in SPACES:
        raise ctx.error(f"atomics on {dtype} in {scope!r} memory are not supported on ROCm "
                        f"(supported: {', '.join(TYPES)} in global or shared memory)")
    return tirx.call_extern(dtype, f"{name}_{SPACES[scope]}_{TYPES[dtype]}", *call.args[1:])


def lower(ctx: Any) -> Any:
    stmt = lower_atomic(ctx)
    if not ctx.has_threads:
        return stmt
    extern = tvm.ir.Op.get("tirx.call_extern")
    return tvm_ffi.structural_map(stmt, (tvm.ir.Call, lambda c: _typed(c, ctx) if c.op.same_as(extern) else c))


ATOMIC = TileOpImpl("tl.atomic", "rocm_atomicrmw", lower, priority=10)

_HELPER_KINDS = ("add", "max", "min")  # what device_lib/atomics.ll provides


def lower_element(ctx: Any) -> Any:
    """An element atomic through core's lowering, its extern calls retargeted to the typed helpers."""
    from tilelang.tileop import intrinsics as I

    op = ctx.op
    if op.startswith(("tl.atomic_add", "tl.atomic_max", "tl.atomic_min")) and "addx" not in op:
        out = I.lower_atomic_rmw(ctx)
    elif op.startswith("tl.atomic_addx"):
        out = I.lower_atomic_vector_add(ctx)
    elif op == "tl.atomic_load_elem_op":
        out = I.lower_atomic_load(ctx)
    elif op == "tl.atomic_store_elem_op":
        out = I.lower_atomic_store(ctx)
    else:
        raise ctx.error(f"no atomic helper for it on ROCm (helpers: {', '.join(_HELPER_KINDS)})",
                        "use T.atomic_add / T.atomic_max / T.atomic_min")
    extern = tvm.ir.Op.get("tirx.call_extern")

    def retype(node: Any) -> Any:
        return tvm_ffi.structural_map(node, (tvm.ir.Call, lambda c: _typed(c, ctx) if c.op.same_as(extern) else c))

    value = None if out.value is None else retype(out.value)
    return I.Lowered(value, [retype(st) for st in out.prefix])


ELEMENT_ATOMICS = tuple(
    TileOpImpl(op, "rocm_atomicrmw", lower_element, priority=10)
    for op in ("tl.atomic_add_elem_op", "tl.atomic_add_ret_elem_op", "tl.atomic_max_elem_op",
               "tl.atomic_max_ret_elem_op", "tl.atomic_min_elem_op", "tl.atomic_min_ret_elem_op",
               "tl.atomic_addx2_elem_op", "tl.atomic_addx2_ret_elem_op", "tl.atomic_addx4_elem_op",
               "tl.atomic_addx4_ret_elem_op", "tl.atomic_load_elem_op", "tl.atomic_store_elem_op",
               "tl.atomic_or_elem_op"))
