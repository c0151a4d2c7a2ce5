"""Printing from CPU kernels: the host functions that ``T.print`` calls (through TVM's packed-function registry).

A CPU kernel runs on the host, so ``T.print`` becomes a call of the global function `PRINT` with the message,
the dtype, the block and thread indices and the value (`tilelang_cpu.intrinsics`). `register` (idempotent)
must have run in the process that calls such a kernel: lowering one registers it.
"""

from __future__ import annotations

import sys
from typing import Any

PRINT = "tilelang_cpu.print"
_registered = False


def _format(value: Any, dtype: str) -> str:
    if dtype == "bool":
        return str(bool(value))
    if dtype.startswith(("float", "bfloat")):
        return repr(float(value))
    return str(int(value))


def _print(msg: str, buffer: str, dtype: str, bx: int, by: int, bz: int, tx: int, ty: int, tz: int, index: int,
           value: Any) -> None:
    where = f"BlockIdx=({bx}, {by}, {bz}), ThreadIdx=({tx}, {ty}, {tz})"
    if not dtype:  # a message only
        line = f"msg='{msg}' {where}"
    elif buffer:
        line = f"msg='{msg}' {where}: buffer={buffer}, index={index}, dtype={dtype} value={_format(value, dtype)}"
    else:
        line = f"msg='{msg}' {where}: dtype={dtype} value={_format(value, dtype)}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def register() -> None:
    """Register the print function with TVM's global registry (once per process)."""
    global _registered
    if _registered:
        return
    import tvm_ffi

    if tvm_ffi.get_global_func(PRINT, allow_missing=True) is None:
        tvm_ffi.register_global_func(PRINT, _print)
    _registered = True
