"""Facts the CPU tile-op lowerings share."""

from __future__ import annotations

from typing import Any


def llvm_vectors(ctx: Any) -> bool:
    """Whether tile ops may emit vectors of any width: LLVM's. The ``c`` kind's vectors are the prelude's
    128-bit structs with arithmetic only, so its tile ops stay scalar (its ``T.Parallel`` loops still vectorise)."""
    from tilelang.backend.target import kind_of

    return bool(ctx.options.get("vectorize", True)) and str(kind_of(ctx.target)) == "llvm"
