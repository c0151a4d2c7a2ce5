"""UnpackedFP4Storage: shared tiles of ``T.float4_e2m1_unpacked`` become byte tiles once the tile ops are lowered.

``T.float4_e2m1_unpacked`` (``custom[float4_e2m1_unpacked]8``) is a storage tag, not a value type: the tile holds
FP4 values in the layout the ``16U4_ALIGN16B`` TMA load writes and ``tcgen05.mma .kind::mxf8f6f4`` reads (each 16
values: 8 packed bytes, then 8 bytes of padding), one byte per value to sizes and descriptors. After tile-op
lowering only addresses of such a tile remain (TMA boxes, UMMA descriptors), so the pass re-declares it as a
``uint8`` tile of the same shape (the CUDA code generator has no C type for the tag). An element access left in
the kernel (a ``T.copy`` into registers, an expression reading the tile) has no meaning for that layout and is
refused with a LoweringError.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

UNPACKED = "custom[float4_e2m1_unpacked]"
STORAGE = "uint8"


def is_unpacked(dtype: Any) -> bool:
    return str(dtype).removesuffix("8") == UNPACKED


def _is_access_ptr(call: Any) -> bool:
    return isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_access_ptr"


def UnpackedFP4Storage(target: Any = None) -> tvm.transform.Pass:
    """Re-declare ``T.float4_e2m1_unpacked`` shared tiles as byte tiles (see the module docstring)."""

    @C.prim_func_pass("cuda.unpacked_fp4_storage")
    def legalize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tiles = [a.buffer for a in C.allocations(func.body) if is_unpacked(a.buffer.ty.dtype)]
        if not tiles:
            return func
        for buf in tiles:
            scope = C.scope_of(buf)
            if scope not in ("shared", "shared.dyn"):
                raise C.lowering_error(func, f"T.float4_e2m1_unpacked is a shared-memory layout of FP4 operands (the "
                                       f"16U4_ALIGN16B TMA load, tcgen05 block-scaled MMA); {buf.name} is in "
                                       f"{scope}: allocate it with T.alloc_shared")
            accesses = [*C.collect(func.body, tvm.ir.TensorLoad, lambda ld, b=buf: ld.source.same_as(b)),
                        *C.collect(func.body, tirx.BufferStore, lambda st, b=buf: st.buffer.same_as(b))]
            if accesses:
                raise C.lowering_error(func, f"shared tile {buf.name} (T.float4_e2m1_unpacked) is read or written "
                                       "element by element; such a tile holds FP4 values 8 bytes of every 16 and is "
                                       "only filled by T.tma_copy from a packed float4_e2m1fn tensor and read by "
                                       "T.tcgen05_gemm_blockscaled")
        rename = {buf: tirx.decl_buffer(list(buf.ty.shape), STORAGE, name=buf.name, scope=C.scope_of(buf))
                  for buf in tiles}
        body = C.substitute(func.body, rename)

        def on_call(call: Any, m: Any) -> Any:
            if _is_access_ptr(call) and is_unpacked(call.args[0].ty.dtype):
                args = [tirx.type_annotation(STORAGE), *[m.mutate(a) for a in call.args[1:]]]
                return tirx.call_intrin("handle", "tirx.tvm_access_ptr", *args)
            return m.default_mutate(call)

        body = tvm_ffi.structural_mutate(body, [(tvm.ir.Call, on_call)])
        return C.with_body(func, body)

    return legalize
