"""Metal 4 cooperative-tensor operators (``T.cooperative_tensor_*``), with the reference's signatures.

A cooperative tensor buffer is ``T.alloc_local((n,), dtype, scope="metal.cooperative_tensor")`` (float16,
bfloat16 or float32, `n` a multiple of 64): `n` elements spread over the 32 lanes of a simdgroup, ``n / 32`` per
lane. It holds consecutive tiles; tile `idx` of a ``rows x cols`` shape (multiples of 16) is the lane's
``rows * cols / 32`` elements from ``idx * rows * cols / 32``. Within a tile, each 16x16 piece (row-major over the
tile) keeps 8 elements per lane: rows ``r`` and ``r + 8``, columns ``c .. c + 3`` with ``r, c`` from the lane id
(`tilelang_metal.mpp`'s lane map, the one MetalPerformancePrimitives' ``matmul2d(16, 32, 16)`` tensors use).

- ``cooperative_tensor_fill(data, idx, value, rows, cols)``: every element of tile `idx` becomes `value`.
- ``cooperative_tensor_load(data, idx, ptr, stride, rows, cols, transposed, tile_m, tile_n, tile_k,
  operand_role)``: tile `idx` from the ``rows x cols`` block at `ptr` (``T.access_ptr(buf[i, j])`` or
  ``T.address_of(buf[i, j])``, threadgroup or device memory, row stride `stride` elements), converted to the
  tensor's dtype; with `transposed` memory holds the block's transpose (``cols x rows``). `tile_m / tile_n /
  tile_k` and `operand_role` (0 left, 1 right, 2 destination) say which ``matmul2d`` operand it feeds.
- ``cooperative_tensor_store(...)``: the same arguments; tile `idx` to memory (converted to its dtype).
- ``cooperative_tensor_multiply_accumulate(c_data, c_idx, a_data, a_idx, b_data, b_idx, d_data, d_idx, m, n, k,
  trans_a, trans_b)``: ``c[c_idx] = a[a_idx] @ b[b_idx] + d[d_idx]`` with MetalPerformancePrimitives
  ``matmul2d(16, 32, 16)`` (m, n, k = 16, 32, 16). `trans_a / trans_b` say the operands were loaded with
  ``transposed=True``; the tensors hold ``op(A)`` and ``op(B)`` either way.

They lower under a ``metal4`` target (`tilelang_metal.tileops.cooperative_tensor`); any other target refuses them
with a LoweringError at the kernel.
"""

from __future__ import annotations

from typing import Any

__all__ = ("cooperative_tensor_fill", "cooperative_tensor_load", "cooperative_tensor_multiply_accumulate",
           "cooperative_tensor_store")

_PUBLIC = "tilelang.metal.language"
OPS = {
    "tl.cooperative_tensor_fill": "Metal 4: fill a cooperative-tensor tile",
    "tl.cooperative_tensor_load": "Metal 4: load a cooperative-tensor tile from memory",
    "tl.cooperative_tensor_store": "Metal 4: store a cooperative-tensor tile to memory",
    "tl.cooperative_tensor_multiply_accumulate": "Metal 4: c = a @ b + d on cooperative tensors (matmul2d)",
}


def _call(name: str, args: list[Any]) -> Any:
    from tilelang.ir import intrin_call, register_intrinsic
    from tilelang_metal.tileops.cooperative_tensor import register_elsewhere

    register_intrinsic(f"tl.{name}", "opaque", OPS[f"tl.{name}"])
    register_elsewhere()
    return intrin_call(f"tl.{name}", "handle", [_expr(a) for a in args])


def _expr(x: Any) -> Any:
    from tvm import tirx

    if isinstance(x, bool):
        return tirx.const(x, "bool")
    if isinstance(x, int):
        return tirx.const(x, "int32")
    if isinstance(x, float):
        return tirx.const(x, "float32")
    return x


def _tensor(x: Any, what: str) -> Any:
    """A cooperative-tensor operand (a buffer or its ``.data``) as its first element, which keeps the buffer."""
    import tvm
    from tvm import tirx

    from tilelang.errors import KernelTypeError
    from tilelang.ir import region as R

    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.buffer_data":
        x = x.args[0]
    if R.is_region(x) or R.is_load(x):
        x = x.source
    if not R.is_buffer(x):
        raise KernelTypeError(f"T.cooperative_tensor_{what}: the tensor operand must be a buffer of scope "
                              f"\"metal.cooperative_tensor\" (T.alloc_local(..., scope=\"metal.cooperative_tensor\")) "
                              f"or its .data, got {x!r}")
    return tirx.BufferLoad(x, [tirx.const(0, "int32") for _ in R.buffer_shape(x)])


def cooperative_tensor_fill(data: Any, idx: Any, value: Any, rows: int, cols: int) -> Any:
    """Set every element of ``rows x cols`` tile `idx` of cooperative tensor `data` to `value`."""
    return _call("cooperative_tensor_fill", [_tensor(data, "fill"), idx, value, rows, cols])


def cooperative_tensor_load(data: Any, idx: Any, ptr: Any, stride: Any, rows: int, cols: int, transposed: Any,
                            tile_m: int, tile_n: int, tile_k: int, operand_role: int) -> Any:
    """Load ``rows x cols`` tile `idx` of `data` from `ptr` (row stride `stride`; see the module docstring)."""
    return _call("cooperative_tensor_load", [_tensor(data, "load"), idx, ptr, stride, rows, cols, transposed,
                                             tile_m, tile_n, tile_k, operand_role])


def cooperative_tensor_store(data: Any, idx: Any, ptr: Any, stride: Any, rows: int, cols: int, transposed: Any,
                             tile_m: int, tile_n: int, tile_k: int, operand_role: int) -> Any:
    """Store ``rows x cols`` tile `idx` of `data` to `ptr` (row stride `stride`; see the module docstring)."""
    return _call("cooperative_tensor_store", [_tensor(data, "store"), idx, ptr, stride, rows, cols, transposed,
                                              tile_m, tile_n, tile_k, operand_role])


def cooperative_tensor_multiply_accumulate(c_data: Any, c_idx: Any, a_data: Any, a_idx: Any, b_data: Any,
                                           b_idx: Any, d_data: Any, d_idx: Any, m: int, n: int, k: int,
                                           trans_a: Any, trans_b: Any) -> Any:
    """``c[c_idx] = a[a_idx] @ b[b_idx] + d[d_idx]`` on ``m x n x k`` tiles (MPP ``matmul2d``)."""
    what = "multiply_accumulate"
    return _call("cooperative_tensor_multiply_accumulate",
                 [_tensor(c_data, what), c_idx, _tensor(a_data, what), a_idx, _tensor(b_data, what), b_idx,
                  _tensor(d_data, what), d_idx, m, n, k, trans_a, trans_b])


for _fn in (cooperative_tensor_fill, cooperative_tensor_load, cooperative_tensor_multiply_accumulate,
            cooperative_tensor_store):
    _fn.__module__ = _PUBLIC
del _fn
