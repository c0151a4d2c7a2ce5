"""Debugging from inside a kernel: ``T.print`` and ``T.device_assert``.

``T.print(expr, msg="")`` prints a scalar with the block and thread that printed it; ``T.print(buffer)`` prints
every element (a shared tile or a fragment from one thread, a per-thread array from every thread); ``T.print(msg=
"...")`` prints a message. ``T.device_assert(cond, msg)`` stops the kernel with `msg` when `cond` is false. Both
are intrinsics (``tl.print``, ``tl.print_buffer_value``, ``tl.device_assert``) that each backend lowers (the CPU
prints through the host; a backend without device output rejects them at lowering, naming the construct).
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R

WARP_SIZE = 32
WARP_GROUP_SIZE = 128


def _str(text: str) -> Any:
    import tvm

    return tvm.ir.StringImm(text)


def _emit(call: Any) -> None:
    from tvm.script.ir_builder import tirx as B

    B.evaluate(call)


def _value(x: Any) -> Any:
    from tvm import tirx

    if hasattr(x, "asobject"):
        x = x.asobject()
    if isinstance(x, bool):
        return tirx.const(x, "bool")
    if isinstance(x, int):
        return tirx.const(x, "int32")
    if isinstance(x, float):
        return tirx.const(x, "float32")
    return x


def _print_buffer(buf: Any, msg: str, condition: Any) -> None:
    """``for i in range(numel): tl.print_buffer_value(msg, name, i, buf[coords(i)])`` under `condition`."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.utils import index_to_coordinates

    shape = R.buffer_shape(buf)
    numel = math.prod(int(s) for s in shape) if all(isinstance(s, (int, tirx.IntImm)) for s in shape) else None
    if numel is None:
        raise KernelTypeError(f"T.print: {R.describe(buf)} has a symbolic shape; print its elements in a loop")

    def body() -> None:
        with B.serial(0, numel) as i:
            value = tirx.BufferLoad(buf, index_to_coordinates(i, shape))
            _emit(_ops.intrin_call("tl.print_buffer_value", "handle", [_str(msg), _str(R.buffer_name(buf)), i, value]))

    if condition is None:
        body()
        return
    with B.If(condition):
        with B.Then():
            body()


def print(obj: Any = None, msg: str = "", warp_group_id: int = 0, warp_id: int = 0) -> None:
    """Print a scalar expression, a buffer's elements, or (``obj=None``) just `msg`, from the device.

    A shared tile or a fragment is printed by one thread: thread ``warp_group_id * 128 + warp_id * 32`` of the
    block (a fragment is first copied to a shared tile); a per-thread array by every thread.
    """
    import tvm

    _state.require("T.print")
    if obj is None:
        if not isinstance(msg, str) or not msg:
            raise KernelTypeError("T.print without a value needs a non-empty msg string")
        _emit(_ops.intrin_call("tl.print", "handle", [_str(msg)]))
        return
    if R.is_buffer(obj):
        scope = R.buffer_scope(obj)
        label = msg or f"buffer<{R.buffer_name(obj)}, {R.buffer_dtype(obj)}>"
        one_thread = None
        if scope in ("shared", "shared.dyn", "local.fragment"):
            from tvm import tirx

            launch = _state.in_kernel("T.print of a shared tile or fragment")
            lane = warp_group_id * WARP_GROUP_SIZE + warp_id * WARP_SIZE
            lanes = [lane] + [0] * (len(launch.thread_vars) - 1)
            for v, want in zip(launch.thread_vars, lanes):
                cond = tirx.EQ(v, tirx.const(want, str(v.ty.dtype)))
                one_thread = cond if one_thread is None else tirx.And(one_thread, cond)
        if scope == "local.fragment":
            from tilelang.language.allocate import alloc_shared
            from tilelang.language.tileops import copy

            staged = alloc_shared(R.buffer_shape(obj), R.buffer_dtype(obj), "shared")
            copy(obj, staged)
            _print_buffer(staged, label, one_thread)
        elif scope in ("shared", "shared.dyn", "local", "local.var", "global"):
            _print_buffer(obj, label, one_thread)
        else:
            raise ValueError(f"Unsupported buffer scope: {scope}")
        return
    value = _value(obj)
    if isinstance(value, tvm.ir.Expr) and tvm.ir.is_prim_expr(value):
        _emit(_ops.intrin_call("tl.print", "handle", [_str(msg or f"expr<{value}>"), value]))
        return
    raise ValueError(f"Unexpected type: {type(obj)}. Supported types are tirx.Buffer, tirx.PrimExpr, and None.")


def device_assert(condition: Any, msg: str = "", no_stack_info: bool = False) -> None:
    """Stop the kernel with `msg` when `condition` (a runtime boolean) is false."""
    from tilelang.frontend import rewrite

    _state.require("T.device_assert")
    cond = rewrite._cond(_value(condition))
    if not rewrite.is_runtime(cond):
        if not cond:
            raise AssertionError(msg or "T.device_assert: the condition is false")
        return
    if not isinstance(msg, str):
        raise KernelTypeError(f"T.device_assert msg must be a string, got {type(msg).__name__}")
    _emit(_ops.intrin_call("tl.device_assert", "handle", [cond, _str(msg)]))
