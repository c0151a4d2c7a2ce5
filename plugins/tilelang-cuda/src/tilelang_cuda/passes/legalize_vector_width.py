"""LegalizeVectorWidth: split vectorised loops wider than 16 bytes, the widest access CUDA C can express.

Core vectorises the innermost loop of a nest that runs whole on one thread (``threads=1`` kernels); TVM's CUDA
codegen has no type for e.g. ``float32x32``. Such a loop becomes a serial loop over 16-byte vectors (or a
serial loop when the extent does not split evenly).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import dtype_bytes
from tilelang.transform import utils as C

MAX_VECTOR_BYTES = 16


def _widest_bytes(body: Any) -> int:
    sizes = [dtype_bytes(str(st.buffer.ty.dtype)) for st in C.collect(body, tirx.BufferStore)]
    sizes += [dtype_bytes(str(ld.source.ty.dtype)) for ld in C.collect(body, tvm.ir.TensorLoad)]
    return max(sizes or [4])


def _split(loop: Any) -> Any:
    extent = C.as_int(loop.extent)
    lanes = max(1, MAX_VECTOR_BYTES // _widest_bytes(loop.body))
    if extent is None or extent <= lanes:
        return loop
    if extent % lanes or lanes == 1:
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
    outer = tirx.Var(f"{loop.loop_var.name}_o", "int32")
    inner = tirx.Var(f"{loop.loop_var.name}_v", "int32")
    body = C.substitute(loop.body, {loop.loop_var: C.add(loop.min, outer * lanes + inner)})
    vec = tirx.For(inner, 0, lanes, tirx.ForKind.VECTORIZED, body)
    return tirx.For(outer, 0, extent // lanes, tirx.ForKind.SERIAL, vec)


def LegalizeVectorWidth(target: Any = None) -> tvm.transform.Pass:
    """Split over-wide vectorised loops (see the module docstring)."""

    @C.prim_func_pass("cuda.legalize_vector_width")
    def legalize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        body = tvm_ffi.structural_map(
            func.body, (tirx.For, lambda lp: _split(lp) if lp.kind == tirx.ForKind.VECTORIZED else lp))
        return C.with_body(func, body)

    return legalize
