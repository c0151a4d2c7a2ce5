"""LegalizeVectorWidth: split vectorised loops wider than 16 bytes, the widest access CUDA C can express.

Core vectorises the innermost loop of a nest that runs whole on one thread (``threads=1`` kernels); TVM's CUDA
codegen has no type for e.g. ``float32x32``. Such a loop becomes a serial loop over 16-byte vectors (or a
serial loop when the extent does not split evenly). A loop whose indices are not a ramp in its variable (a
swizzled tile's XOR) computes them as int32 vectors: at most 4 lanes, the widest TVM's CUDA C can build.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import dtype_bytes
from tilelang.transform import utils as C

MAX_VECTOR_BYTES = 16
MAX_INDEX_LANES = 4  # int32 index vectors: TVM's CUDA C has int4, and no 8-lane int32 type it can build


def _widest_bytes(body: Any) -> int:
    sizes = [dtype_bytes(str(st.buffer.ty.dtype)) for st in C.collect(body, tirx.BufferStore)]
    sizes += [dtype_bytes(str(ld.source.ty.dtype)) for ld in C.collect(body, tvm.ir.TensorLoad)]
    return max(sizes or [4])


def _affine(loop: Any) -> bool:
    """Whether every load / store index moves by a fixed step with the loop variable (it vectorises to a ramp);
    one that does not (a swizzle's XOR the analyzer cannot see through) is computed as a vector of int32 lanes."""
    v = loop.loop_var
    ana = tvm.sym.Analyzer()
    ana.bind(v, tvm.ir.Range.from_min_extent(loop.min, loop.extent - 1))
    indices = [i for st in C.collect(loop.body, tirx.BufferStore) for i in st.indices]
    indices += [i for ld in C.collect(loop.body, tvm.ir.TensorLoad) for i in ld.indices]
    for index in indices:
        if not C.uses_var(index, [v]):
            continue
        step = C.substitute(index, {v: v + 1}) - index
        first = C.substitute(step, {v: loop.min})
        if not ana.can_prove(step == first):
            return False
    return True


def _split(loop: Any) -> Any:
    extent = C.as_int(loop.extent)
    lanes = max(1, MAX_VECTOR_BYTES // _widest_bytes(loop.body))
    if lanes > MAX_INDEX_LANES and not _affine(loop):
        lanes = MAX_INDEX_LANES
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
