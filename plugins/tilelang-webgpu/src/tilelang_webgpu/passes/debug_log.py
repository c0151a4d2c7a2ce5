"""``T.print`` and ``T.device_assert`` on WebGPU: records in a hidden storage buffer, printed by the host.

WGSL has no ``printf``. `DebugLog` (a ``post_layout`` pass, before core lowers the intrinsics) gives a kernel
that prints or asserts one more buffer parameter, `LOG_PARAM` (`LOG_WORDS` u32 words), and replaces each
``tl.print`` / ``tl.print_buffer_value`` / ``tl.device_assert`` by a record written there: word 0 counts the
words used (an ``atomicAdd`` reserves a record's `RECORD_WORDS` words); a record holds its id, the block and
thread indices, the element index and the value's 32 bits. An assertion writes its record only when its
condition is false. The record table (message, buffer name, dtype, kind per id) is the function attribute
`RECORDS_ATTR`, which the launch plan keeps (`tilelang_webgpu.plan`).

The launcher (`tilelang_webgpu.launch`) binds a zeroed log, reads it back after the call, writes the records
to stdout in the CPU backend's format (``msg='..' BlockIdx=(..), ThreadIdx=(..): dtype=.. value=..``, sorted
by block and thread, each thread's in program order) and, when an assertion failed, raises `DeviceAssertError`
(a RuntimeError) with its message. Records past the log's capacity are dropped and counted.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["LOG_PARAM", "LOG_WORDS", "RECORD_WORDS", "RECORDS_ATTR", "DebugLog", "DeviceAssertError",
           "report"]

LOG_PARAM = "tl_debug_log"
LOG_WORDS = 1 << 14
RECORD_WORDS = 9  # id, bx, by, bz, tx, ty, tz, index, value bits
RECORDS_ATTR = "tl.webgpu_debug_records"
_OPS = ("tl.print", "tl.print_buffer_value", "tl.device_assert")
_BLOCK = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
_THREAD = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


class DeviceAssertError(RuntimeError):
    """A ``T.device_assert`` condition was false in at least one thread."""


def _value_bits(value: Any) -> Any:
    """The 32 bits that `report` decodes for `value`'s dtype (floats as f32, integers as i32 / u32)."""
    from tvm import tirx

    dtype = str(value.ty.dtype)
    if dtype.startswith(("float", "bfloat")):
        f32 = value if dtype == "float32" else tirx.Cast("float32", value)
        return tirx.reinterpret("uint32", f32)
    if dtype == "bool":
        return tirx.Select(value, tirx.const(1, "uint32"), tirx.const(0, "uint32"))
    if dtype.startswith("int") and dtype != "int32":
        value = tirx.Cast("int32", value)
    return value if str(value.ty.dtype) == "uint32" else tirx.Cast("uint32", value)


def _string(node: Any) -> str:
    return str(node.value) if hasattr(node, "value") else str(node)


class _Rewriter:
    """Replaces the debug intrinsics of one function by log records; collects the record table."""

    def __init__(self, func: Any):
        from tvm import tirx

        from tilelang.transform import utils as C

        self.log = tirx.decl_buffer((LOG_WORDS,), "uint32", name=LOG_PARAM, scope="global")
        launch = C.launch_extents(func)
        zero = tirx.const(0, "int32")
        self.where = [launch[t][0] if t in launch else zero for t in (*_BLOCK, *_THREAD)]
        self.records: list[dict[str, str]] = []

    def record(self, call: Any) -> Any:
        from tvm import tirx

        op = str(call.op.name)
        args = list(call.args)
        index: Any = tirx.const(0, "int32")
        value: Any = None
        cond: Any = None
        entry = {"kind": "print", "msg": _string(args[0]), "buffer": "", "dtype": ""}
        if op == "tl.print_buffer_value":
            entry["buffer"], index, value = _string(args[1]), args[2], args[3]
        elif op == "tl.print":
            value = args[1] if len(args) > 1 else None
        else:
            cond = args[0]
            entry = {"kind": "assert", "msg": _string(args[1]) if len(args) > 1 else "", "buffer": "", "dtype": ""}
        if value is not None:
            entry["dtype"] = str(value.ty.dtype)
        rid = len(self.records)
        self.records.append(entry)

        slot = tirx.decl_buffer((1,), "uint32", name="tl_debug_slot", scope="local")
        at = tirx.BufferLoad(slot, [0])
        reserve = tirx.call_extern("uint32", "atomicAdd", tirx.address_of(tirx.BufferLoad(self.log, [0])),
                                   tirx.const(RECORD_WORDS, "uint32"))
        words = [tirx.const(rid, "uint32"), *(tirx.Cast("uint32", w) for w in self.where),
                 tirx.Cast("uint32", index), _value_bits(value) if value is not None else tirx.const(0, "uint32")]
        stores = [tirx.BufferStore(self.log, w, [tirx.Cast("int32", at + tirx.const(1 + k, "uint32"))])
                  for k, w in enumerate(words)]
        fits = at + tirx.const(1 + RECORD_WORDS, "uint32") <= tirx.const(LOG_WORDS, "uint32")
        body = tirx.SeqStmt([tirx.AllocBuffer(slot), tirx.BufferStore(slot, reserve, [0]),
                             tirx.IfThenElse(fits, tirx.SeqStmt(stores), None)])
        if cond is not None:
            failed = tirx.Not(cond) if str(cond.ty.dtype) == "bool" else cond == tirx.const(0, str(cond.ty.dtype))
            body = tirx.IfThenElse(failed, body, None)
        return body


def _debug_call(stmt: Any) -> Any:
    import tvm

    call = getattr(stmt, "value", None)
    if isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name in _OPS:
        return call
    return None


def DebugLog(target: Any = None) -> Any:
    """The ``post_layout`` pass that turns the debug intrinsics into log records (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    def on_eval(stmt: Any, rewriter: _Rewriter) -> Any:
        call = _debug_call(stmt)
        return stmt if call is None else rewriter.record(call)

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.debug_log")
    def rewrite(func: Any, mod: Any, ctx: Any) -> Any:
        found: list[Any] = []

        def on_eval_seen(stmt: Any) -> None:
            if _debug_call(stmt) is not None:
                found.append(stmt)

        tvm_ffi.structural_walk(func.body, [(tirx.Evaluate, on_eval_seen)])
        if not found:
            return func
        rewriter = _Rewriter(func)
        body = tvm_ffi.structural_map(func.body, (tirx.Evaluate, lambda s: on_eval(s, rewriter)))
        out = tirx.PrimFunc([*func.params, rewriter.log], body, func.ret_type, func.attrs)
        return out.with_attr(RECORDS_ATTR, tvm.ir.StringImm(json.dumps(rewriter.records)))

    return rewrite


def records_of(funcs: Sequence[Any]) -> list[dict[str, str]]:
    """The record table carried by the first of `funcs` (PrimFuncs) that has one."""
    for func in funcs:
        attrs = getattr(func, "attrs", None)
        if attrs is not None and RECORDS_ATTR in attrs:
            return json.loads(_string(attrs[RECORDS_ATTR]))
    return []


def _format(bits: int, dtype: str) -> str:
    if dtype == "bool":
        return str(bool(bits))
    if dtype.startswith(("float", "bfloat")):
        return repr(struct.unpack("<f", struct.pack("<I", bits))[0])
    if dtype.startswith("int"):
        return str(bits - (1 << 32) if bits & 0x80000000 else bits)
    return str(bits)


def report(words: Any, records: Sequence[dict[str, str]], kernel: str, out: Any = None) -> None:
    """Print the records of a read-back log (a sequence of u32 `words`); raise `DeviceAssertError` if an
    assertion failed."""
    out = out if out is not None else sys.stdout
    used = int(words[0])
    kept = min(used, LOG_WORDS - 1) // RECORD_WORDS
    rows = []
    for n in range(kept):
        base = 1 + n * RECORD_WORDS
        rows.append([int(w) for w in words[base:base + RECORD_WORDS]])
    rows.sort(key=lambda r: (r[3], r[2], r[1], r[6], r[5], r[4]))  # stable: each thread's records in order
    failed = []
    for rid, bx, by, bz, tx, ty, tz, index, bits in rows:
        entry = records[rid] if rid < len(records) else {"kind": "print", "msg": "?", "buffer": "", "dtype": ""}
        where = f"BlockIdx=({bx}, {by}, {bz}), ThreadIdx=({tx}, {ty}, {tz})"
        if entry["kind"] == "assert":
            failed.append(f"{entry['msg'] or 'T.device_assert failed'} ({where})")
            continue
        dtype = entry["dtype"]
        if not dtype:
            line = f"msg='{entry['msg']}' {where}"
        elif entry["buffer"]:
            line = (f"msg='{entry['msg']}' {where}: buffer={entry['buffer']}, index={index}, dtype={dtype} "
                    f"value={_format(bits, dtype)}")
        else:
            line = f"msg='{entry['msg']}' {where}: dtype={dtype} value={_format(bits, dtype)}"
        out.write(line + "\n")
    dropped = used // RECORD_WORDS - kept
    if dropped > 0:
        out.write(f"[{kernel}: {dropped} T.print / T.device_assert records did not fit the debug log]\n")
    out.flush()
    if failed:
        more = f" (and {len(failed) - 1} more failing threads)" if len(failed) > 1 else ""
        raise DeviceAssertError(f"kernel {kernel!r}: device assertion failed: {failed[0]}{more}")
