"""Helpers for the front-end tests: walking a built PrimFunc."""

from __future__ import annotations

from typing import Any


def collect(node: Any, cls: Any) -> list[Any]:
    """Every sub-node of type `cls`, in pre-order."""
    import tvm_ffi

    out: list[Any] = []
    tvm_ffi.structural_walk(node, [(cls, out.append)], order="pre")
    return out


def tile_calls(func: Any) -> list[tuple[str, list[Any]]]:
    """(op name, args) of every tl.* call in `func`, in program order."""
    import tvm

    calls = collect(func.body, tvm.ir.Call)
    return [(c.op.name, list(c.args)) for c in calls if isinstance(c.op, tvm.ir.Op) and c.op.name.startswith("tl.")]


def ints(values: Any) -> list[int]:
    return [int(v) for v in values]
