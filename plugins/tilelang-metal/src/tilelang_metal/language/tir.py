"""Metal's low-level TIR operators (``T.simdgroup_*``): 8x8 simdgroup matrices, as TVM's Metal codegen emits them.

A matrix operand `d` is a buffer of scope ``metal.simdgroup`` (or its ``.data``) holding consecutive 8x8 matrices,
picked by `index`; `ptr` is the address of a tile's first element (``T.address_of(buf[i, j])``) in threadgroup or
device memory, `stride` its row length in elements. ``simdgroup_load`` / ``simdgroup_store`` move one matrix
(transposed when `transpose_matrix`); ``simdgroup_multiply_accumulate`` computes ``d = a @ b + c``.
"""

from __future__ import annotations

from typing import Any

__all__ = ("make_filled_simdgroup_matrix", "simdgroup_load", "simdgroup_multiply_accumulate", "simdgroup_store")

_PUBLIC = "tilelang.metal.language.tir"


def _matrix(x: Any) -> Any:
    """A matrix operand as its buffer (a ``buffer.data`` expression is unwrapped)."""
    import tvm

    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.buffer_data":
        return x.args[0]
    return x


def _value(x: Any, dtype: str) -> Any:
    from tvm import tirx

    return tirx.const(x, dtype) if isinstance(x, (bool, int, float)) else x


def _call(name: str, *args: Any) -> Any:
    from tvm import tirx

    return tirx.call_intrin("handle", f"tirx.{name}", *args)


def make_filled_simdgroup_matrix(d: Any, index: Any, value: Any, col: int = 8, row: int = 8) -> Any:
    """Fill matrix `index` of `d` with `value`."""
    buf = _matrix(d)
    dtype = str(buf.ty.dtype) if hasattr(buf, "ty") else "float32"
    return _call("make_filled_simdgroup_matrix", buf, _value(index, "int32"), _value(value, dtype),
                 _value(col, "int32"), _value(row, "int32"))


def simdgroup_load(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
                   transpose_matrix: bool = False) -> Any:
    """Load matrix `index` of `d` from the tile at `ptr` (row length `stride`)."""
    return _call("simdgroup_load", _matrix(d), _value(index, "int32"), ptr, _value(stride, "int32"),
                 _value(col, "int32"), _value(row, "int32"), _value(transpose_matrix, "bool"))


def simdgroup_store(d: Any, index: Any, ptr: Any, stride: Any, col: int = 8, row: int = 8,
                    transpose_matrix: bool = False) -> Any:
    """Store matrix `index` of `d` to the tile at `ptr` (row length `stride`)."""
    return _call("simdgroup_store", _matrix(d), _value(index, "int32"), ptr, _value(stride, "int32"),
                 _value(col, "int32"), _value(row, "int32"), _value(transpose_matrix, "bool"))


def simdgroup_multiply_accumulate(d: Any, index_d: Any, a: Any, index_a: Any, b: Any, index_b: Any, c: Any,
                                  index_c: Any) -> Any:
    """``d[index_d] = a[index_a] @ b[index_b] + c[index_c]`` on 8x8 simdgroup matrices."""
    return _call("simdgroup_multiply_accumulate", _matrix(d), _value(index_d, "int32"), _matrix(a),
                 _value(index_a, "int32"), _matrix(b), _value(index_b, "int32"), _matrix(c), _value(index_c, "int32"))


for _fn in (make_filled_simdgroup_matrix, simdgroup_load, simdgroup_multiply_accumulate, simdgroup_store):
    _fn.__module__ = _PUBLIC
del _fn
