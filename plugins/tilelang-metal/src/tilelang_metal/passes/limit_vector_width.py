"""``metal.limit_vector_width`` (`LimitVectorWidth`): split vectorized loops wider than Metal's 4-lane vectors.

MSL has no ``float32x32``: TVM's Metal codegen fails on any vectorized loop wider than 4 ("Cannot convert
type float32x32 to Metal type"). A vectorized loop of extent ``n > 4`` becomes a serial loop over ``n / 4``
chunks of a 4-lane vectorized loop when 4 divides ``n``, else a serial loop.

16-bit floats: a loop whose body is a plain copy (a store of a load of the same 16-bit dtype) of an even number of
lanes, contiguous on both sides, may keep up to 8, since `tilelang_metal.passes.pack_half_vectors` moves it as packed
``uint`` lanes. It packs nothing else, so an odd count, or a side that is strided (a transposing copy's gather or
scatter), follows the rules below: an 8-lane strided copy would stay a ``float16x8`` vector, which MSL does not
have (``half8``), when storage planning makes the other side's buffer an array of such vectors. Any other vectorized
``bfloat16`` loop runs serially: the codegen spells ``bfloat16xN`` as a scalar ``bfloat``. So does a loop that
converts between element types: the codegen spells a vector conversion as a C-style cast (``(half4)v``), which
MSL rejects between vectors of different element types.
"""

from __future__ import annotations

from typing import Any

import tvm

MAX_LANES = 4
MAX_COPY_LANES_16BIT = 8  # 128 bits, moved as uint4


def _copy_dtype(body: Any) -> str | None:
    """The dtype of a loop body that is one store of a load of the same dtype, else None."""
    from tvm import tirx

    if not isinstance(body, tirx.BufferStore) or not isinstance(body.value, tvm.ir.TensorLoad):
        return None
    dtype = str(body.buffer.ty.dtype)
    return dtype if str(body.value.source.ty.dtype) == dtype else None


def _contiguous(buf: Any, indices: Any, var: Any) -> bool:
    """Whether the element of `buf` at `indices` moves by exactly one (row-major) when `var` grows by one."""
    from tilelang.transform import utils as C

    if not indices or len(indices) != len(buf.ty.shape):
        return False
    offset, stride = indices[-1], buf.ty.shape[-1]
    for extent, index in reversed(list(zip(buf.ty.shape[:-1], indices[:-1]))):
        offset, stride = offset + index * stride, stride * extent
    step = tvm.sym.Analyzer().simplify(C.substitute(offset, {var: var + 1}) - offset)
    return C.is_const(step, 1)


def _serial_only(body: Any) -> bool:
    """Whether a vectorized `body` would print as MSL that is wrong: bf16 stores or element-type casts."""
    from tvm import tirx

    from tilelang.transform import utils as C

    if C.collect(body, tirx.BufferStore, lambda s: str(s.buffer.ty.dtype).startswith("bfloat16")):
        return True
    return bool(C.collect(body, tirx.Cast, lambda c: str(c.ty.dtype) != str(c.value.ty.dtype)))


def LimitVectorWidth(target: Any = None) -> tvm.transform.Pass:
    """Split vectorized loops to at most `MAX_LANES` lanes (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def split(loop: Any) -> Any:
        if loop.kind != tirx.ForKind.VECTORIZED:
            return loop
        extent = C.as_int(loop.extent)
        copy = _copy_dtype(loop.body)
        # packed as uint lanes: an even number of 16-bit lanes, contiguous on both sides, only (pack_half_vectors
        # leaves odd counts alone and copies a strided side element by element)
        half_copy = copy is not None and tvm.DataType(copy).bits == 16 and extent is not None and extent % 2 == 0
        if half_copy:
            store, load = loop.body, loop.body.value
            half_copy = (_contiguous(store.buffer, store.indices, loop.loop_var)
                         and _contiguous(load.source, load.indices, loop.loop_var))
        width = MAX_COPY_LANES_16BIT if half_copy else MAX_LANES
        serial = tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
        if not half_copy and _serial_only(loop.body):
            return serial
        if extent is not None and extent <= width:
            return loop
        if extent is None or extent % width or not C.is_const(loop.min, 0):
            return serial
        outer = tirx.Var(f"{loop.loop_var.name}_o", "int32")
        inner = tirx.Var(f"{loop.loop_var.name}_v", "int32")
        body = C.substitute(loop.body, {loop.loop_var: outer * width + inner})
        vec = tirx.For(inner, 0, width, tirx.ForKind.VECTORIZED, body)
        return tirx.For(outer, 0, extent // width, tirx.ForKind.SERIAL, vec)

    @C.prim_func_pass("metal.limit_vector_width")
    def limit_vector_width(func: Any, mod: Any, ctx: Any) -> Any:
        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, split)))

    return limit_vector_width
