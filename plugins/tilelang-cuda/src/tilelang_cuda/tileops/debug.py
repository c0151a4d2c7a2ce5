"""``T.device_assert`` on CUDA: a thread whose condition is false prints the message with its block and thread
indices (device ``printf``) and traps (``__trap()``: the launch fails with ``cudaErrorLaunchFailure``, as the
reference's ``device_assert`` does through CUDA's ``assert``)."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang_cuda.tileops.common import is_cuda


def _three(vs: list[Any]) -> list[Any]:
    return [*vs, *[tirx.const(0, "int32")] * (3 - len(vs))][:3]


def _c_string_body(text: str) -> str:
    """`text` escaped for a C string literal (TVM's code generator prints a StringImm between quotes as is)."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return "".join(out)


def lower_device_assert(ctx: Any) -> Any:
    """``if (!cond) { printf(message, block, thread); __trap(); }``"""
    from tilelang.backend.sdk import Lowered

    cond = ctx.args[0]
    if str(cond.ty.dtype) != "bool":
        cond = cond != tirx.const(0, str(cond.ty.dtype))
    message = (ctx.str_arg(1, "") or "T.device_assert failed").replace("%", "%%")
    fmt = _c_string_body(f"{message} (block (%d, %d, %d), thread (%d, %d, %d))\n")
    ids = [tirx.Cast("int32", v) if str(v.ty.dtype) != "int32" else v
           for v in _three(list(ctx.block_vars)) + _three(list(ctx.thread_vars))]
    report = tirx.Evaluate(tirx.call_extern("int32", "printf", tvm.ir.StringImm(fmt), *ids))
    trap = tirx.Evaluate(tirx.call_extern("void", "__trap"))
    return Lowered(None, [tirx.IfThenElse(tirx.Not(cond), tirx.SeqStmt([report, trap]), None)])


DEVICE_ASSERT = TileOpImpl("tl.device_assert", "cuda_trap", lower_device_assert, supports_target=is_cuda,
                           priority=10)
