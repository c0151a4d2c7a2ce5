"""``tl.atomic`` on AMD GPUs: core's lowering, with each update calling a typed helper of `device_lib/atomics.ll`.

LLVM code cannot call ``atomicAdd``: the helpers ``tl_atomic_<add|max|min>_<global|shared>_<f32|i32|u32>``
are single ``atomicrmw`` instructions in LLVM IR that TVM's ROCm codegen links into the kernel.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.atomic import lower_atomic

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
