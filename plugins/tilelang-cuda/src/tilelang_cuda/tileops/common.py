"""Small IR builders shared by the CUDA tile-op implementations."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import kind_of


def is_cuda(target: Any) -> bool:
    return kind_of(target) == "cuda"


def arch_number(target: Any) -> int:
    """``sm_90a`` -> 90."""
    arch = str(target.attrs.get("arch", "sm_80")) if hasattr(target, "attrs") else str(target.get("arch", "sm_80"))
    return int("".join(ch for ch in arch if ch.isdigit()) or 80)


def extern(name: str, *args: Any) -> Any:
    return tirx.Evaluate(tirx.call_extern("void", name, *args))


def addr(buf: Any, idx: list[Any], rw: int = 3) -> Any:
    """A pointer to ``buf[idx]``; shared buffers go through ``tvm_access_ptr`` (what TVM's shared-memory
    planner rewrites and its barrier analysis sees), others through ``address_of``."""
    if str(buf.ty.storage_scope) not in ("shared", "shared.dyn") or rw != 2:
        return tirx.address_of(tirx.BufferLoad(buf, idx))
    from tilelang.layout import linearize

    shape = list(buf.ty.shape)
    offset = linearize(idx, shape)
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation(str(buf.ty.dtype)), buf.data,
                            offset, 1, rw)


def extern_name(stmt: Any) -> str | None:
    """The helper name of ``Evaluate(call_extern("name", ...))``; None for any other statement."""
    if isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call):
        call = stmt.value
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern":
            return str(call.args[0].value)
    return None


def sync() -> Any:
    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))


def unroll(n: int, name: str, body: Any) -> Any:
    v = tirx.Var(name, "int32")
    return tirx.For(v, 0, n, tirx.ForKind.UNROLLED, body(v))
