"""TVM's ``tirx.op`` functions (math, intrinsic calls, ``call_extern``, ...) less the backend-only ones.

The reference's ``tilelang.language.tir.op``; the backend-only names (`tilelang.language.tir.exports`) are
provided by backend dialects. Importing this module imports TVM.
"""

from __future__ import annotations

from typing import Any

import tvm.tirx.op as _op

from tilelang.language.tir.exports import BACKEND_ONLY_TIR_EXPORTS

__all__ = tuple(sorted(n for n in dir(_op) if not n.startswith("_") and n not in BACKEND_ONLY_TIR_EXPORTS
                       and callable(getattr(_op, n))))
_NAMES = frozenset(__all__)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_op, name)
