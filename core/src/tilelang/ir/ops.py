"""Tile operators as tirx Ops (``tl.copy``, ``tl.fill``, ``tl.gemm``, ``tl.reduce``, ``tl.cumsum``, ``tl.atomic``).

A tile-op call site is ``tirx.Evaluate(tvm.ir.Call(Op.get(name), args, ret_ty="void"))``; the argument forms
are fixed by ``docs/ir.md``. Registration is idempotent and happens on first use (importing this module does
not import TVM).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from tilelang.ir._lazy_tvm import tirx, tvm

#: name -> one-line description (also the Op's description).
TILE_OPS: dict[str, str] = {
    "tl.copy": "tl.copy(src, dst): element-wise copy of a region with a cast to the dst dtype",
    "tl.fill": "tl.fill(dst, value): set every element of a region",
    "tl.gemm": "tl.gemm(A, B, C, trans_A, trans_B, policy, clear_accum): C (+)= op(A) @ op(B)",
    "tl.reduce": "tl.reduce(src, dst, kind, dim, clear): reduce src along dim into dst",
    "tl.cumsum": "tl.cumsum(src, dst, dim, reverse): inclusive prefix sum along dim",
    "tl.atomic": "tl.atomic(dst, value, kind): atomic read-modify-write of a region",
}

REDUCE_KINDS = ("sum", "max", "min", "abssum", "absmax")
ATOMIC_KINDS = ("add", "max", "min")


class GemmWarpPolicy(enum.IntEnum):
    """How ``T.gemm`` spreads the warps of a block over the output tile."""

    Square = 0
    FullRow = 1
    FullCol = 2


def _op_registered(name: str) -> bool:
    try:
        tvm.ir.Op.get(name)
    except Exception:
        return False
    return True


def register_tile_op(name: str, description: str = "", *, printer_name: str | None = None) -> tvm.ir.Op:
    """Register ``name`` as an opaque tirx Op (once per process) and return it.

    ``printer_name`` is how ``func.script()`` prints the call (``T.<printer_name>(...)``); default: ``name``.
    """
    if not _op_registered(name):
        tvm.get_global_func("ir.RegisterOp")(name, description)
    op = tvm.ir.Op.get(name)
    # Both attributes must be plain Python values; get_attr() is the reliable per-op presence test.
    if op.get_attr("TCallEffectKind") is None:
        tvm.ir.register_op_attr(name, "TCallEffectKind", int(tirx.CallEffectKind.Opaque.value))
    if op.get_attr("TScriptPrinterName") is None:
        tvm.ir.register_op_attr(name, "TScriptPrinterName", printer_name or name)
    return op


def register_all() -> None:
    """Register every op of :data:`TILE_OPS` (idempotent)."""
    for name, description in TILE_OPS.items():
        register_tile_op(name, description)


_registered = False


def ensure_registered() -> None:
    """Register the tile ops with TVM once per process."""
    global _registered
    if not _registered:
        register_all()
        _registered = True


def tile_call(name: str, args: Sequence[Any]) -> tvm.ir.Call:
    """The ``tvm.ir.Call`` of tile op ``name`` (void result) with ``args``."""
    ensure_registered()
    return tvm.ir.Call(tvm.ir.Op.get(name), list(args), ret_ty="void")


def tile_stmt(name: str, args: Sequence[Any]) -> tirx.Stmt:
    """``Evaluate(tile_call(name, args))``."""
    return tirx.Evaluate(tile_call(name, args))


def tile_op_name(node: Any) -> str | None:
    """The ``tl.*`` name when ``node`` is a tile-op Call or an Evaluate of one, else None."""
    if isinstance(node, tirx.Evaluate):
        node = node.value
    if isinstance(node, tvm.ir.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name in TILE_OPS:
        return node.op.name
    return None
