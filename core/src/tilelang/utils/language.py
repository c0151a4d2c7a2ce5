"""Buffer helpers of the reference's ``tilelang.utils.language``: scope predicates, shapes / strides / offsets of
buffers, regions and elements, regions from elements, and a few IR queries.

A "buffer-like" value is a buffer, a region ``A[a:b, c]`` or an element ``A[i, j]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tilelang.ir import region as R


def _get_buffer(obj: Any) -> Any:
    """The buffer of a buffer, element or region (TypeError otherwise)."""
    return R.buffer_of(obj)


def _scope(obj: Any) -> str:
    return R.buffer_scope(_get_buffer(obj))


def is_global(buffer: Any) -> bool:
    return _scope(buffer) == "global"


def is_shared(buffer: Any, allow_dynamic: bool = True) -> bool:
    scope = _scope(buffer)
    return scope == "shared" or (allow_dynamic and scope == "shared.dyn")


def is_shared_dynamic(buffer: Any) -> bool:
    return _scope(buffer) == "shared.dyn"


def is_tensor_memory(buffer: Any) -> bool:
    return _scope(buffer).startswith("shared.tmem")


def is_local(buffer: Any) -> bool:
    return _scope(buffer) == "local"


def is_fragment(buffer: Any) -> bool:
    return _scope(buffer).startswith("local.fragment")


def is_local_var(buffer: Any) -> bool:
    return _scope(buffer) == "local.var"


def get_buffer_elems(buffer: Any) -> Any:
    """The number of elements of `buffer` (an int for constant shapes)."""
    shape = [getattr(s, "value", s) for s in R.buffer_shape(buffer)]
    return math.prod(shape) if all(isinstance(s, int) for s in shape) else _product(R.buffer_shape(buffer))


def _product(values: Sequence[Any]) -> Any:
    out: Any = 1
    for v in values:
        out = out * v
    return out


def array_reduce(array: Sequence[int]) -> int:
    """The product of `array`."""
    return math.prod(array)


def retrieve_func_from_module(ir_module: Any) -> Any:
    """The single PrimFunc of `ir_module` (ValueError when there is not exactly one)."""
    funcs = list(ir_module.functions.values())
    if len(funcs) != 1:
        raise ValueError(f"expected a module with one PrimFunc, got {len(funcs)} functions")
    return funcs[0]


def to_buffer_region(obj: Any, access_type: str = "rw", extents: Sequence[Any] | None = None) -> Any:
    """`obj` as a region (an element with `extents` is the region at that corner)."""
    return R.to_region(obj, extents)


def get_buffer_region_from_load(load: Any, extents: Sequence[Any] | None = None) -> Any:
    """The region an element ``A[i, j]`` starts with `extents` (None without extents: one element is no region)."""
    if extents is None:
        return None
    return R.to_region(load, extents)


def retrieve_shape(obj: Any) -> list[Any]:
    """The shape of a buffer, the extents of a region, or ``[1, ...]`` for an element."""
    if R.is_buffer(obj):
        return R.buffer_shape(obj)
    if R.is_region(obj):
        return [r.extent for r in obj.region]
    if R.is_load(obj):
        return [1] * len(obj.indices)
    raise TypeError(f"expected a buffer, a region or an element, got {R.describe(obj)}")


def retrieve_stride(obj: Any) -> list[Any]:
    """The strides of the buffer of `obj` (row-major when it declares none)."""
    buf = _get_buffer(obj)
    strides = list(buf.ty.strides) if buf.ty.strides else []
    if strides:
        return strides
    out: list[Any] = []
    acc: Any = 1
    for extent in reversed(R.buffer_shape(buf)):
        out.insert(0, acc)
        acc = acc * extent
    return out


def retrieve_offset(obj: Any) -> list[Any]:
    """Per-dimension start of `obj` in its buffer (zeros for a whole buffer)."""
    if R.is_buffer(obj):
        return [0] * len(R.buffer_shape(obj))
    if R.is_region(obj):
        return [r.min for r in obj.region]
    if R.is_load(obj):
        return list(obj.indices)
    raise TypeError(f"expected a buffer, a region or an element, got {R.describe(obj)}")


def retrieve_buffer_and_offset(obj: Any) -> tuple[Any, Any]:
    """``(buffer, element offset of obj's first element)``."""
    buf = _get_buffer(obj)
    offsets = retrieve_offset(obj)
    flat: Any = 0
    for off, stride in zip(offsets, retrieve_stride(buf)):
        flat = flat + off * stride
    return buf, flat


def retrieve_ptr(obj: Any, access_type: str = "r", ignore_last_ndim: int = 0) -> Any:
    """A ``T.access_ptr`` to the first element of `obj`."""
    from tilelang.language.views import access_ptr

    return access_ptr(obj, access_type, ignore_last_ndim=ignore_last_ndim)


retrive_ptr_from_buffer_region = retrieve_ptr  # the reference's spelling


def retrieve_dtype(obj: Any) -> str:
    return R.buffer_dtype(_get_buffer(obj))


def bits_product(shape: Sequence[Any], dtype: str) -> Any:
    """The number of bits of a `shape` tensor of `dtype`."""
    import tvm

    dt = tvm.DataType(str(dtype))
    return _product(list(shape)) * dt.bits * dt.lanes


def prim_expr_equal(lhs: Any, rhs: Any) -> bool:
    """Whether two integer expressions are provably equal."""
    from tvm import tirx

    if isinstance(lhs, int) and isinstance(rhs, int):
        return lhs == rhs
    lhs = tirx.const(lhs, "int32") if isinstance(lhs, int) else lhs
    rhs = tirx.const(rhs, "int32") if isinstance(rhs, int) else rhs
    return bool(R.analyzer().can_prove_equal(lhs, rhs))


def legalize_pairwise_extents(src_extents: Sequence[Any], dst_extents: Sequence[Any]) -> tuple[list, list]:
    """Two extent lists aligned on their trailing dimensions (the shorter padded with leading 1s)."""
    src, dst = list(src_extents), list(dst_extents)
    if len(src) < len(dst):
        src = [1] * (len(dst) - len(src)) + src
    elif len(dst) < len(src):
        dst = [1] * (len(src) - len(dst)) + dst
    return src, dst


def is_full_region(buffer_region: Any) -> bool:
    """Whether a region covers its whole buffer."""
    shape = R.buffer_shape(buffer_region.source)
    return all(prim_expr_equal(r.min, 0) and prim_expr_equal(r.extent, s)
               for r, s in zip(buffer_region.region, shape))


def get_prim_func_name(func: Any, default: str | None = None) -> str | None:
    """The ``global_symbol`` of a PrimFunc, else `default`."""
    if func is None or func.attrs is None or "global_symbol" not in func.attrs:
        return default
    return str(func.attrs["global_symbol"])


def side_effect(expr: Any) -> Any:
    """The strongest ``CallEffectKind`` of the calls in `expr` (``Pure`` when it calls nothing impure)."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    worst = int(tirx.CallEffectKind.Pure.value)
    for call in C.collect(expr, tvm.ir.Call):
        kind = call.op.get_attr("TCallEffectKind") if isinstance(call.op, tvm.ir.Op) else None
        value = int(kind) if kind is not None else int(tirx.CallEffectKind.Opaque.value)
        worst = max(worst, value)
    return tirx.CallEffectKind(worst)
