"""cpu.float8_e4m3_as_fn: on the CPU, ``float8_e4m3`` is ``float8_e4m3fn`` (no infinities, largest value 448),
as in the reference TileLang off ROCm: torch tensors of such a parameter are ``torch.float8_e4m3fn`` (the JIT
allocates its outputs so), and the argument checks must accept them. Every ``float8_e4m3`` buffer (parameters
included), value and conversion is rewritten to ``float8_e4m3fn`` before layout inference (core's
`Float8E4M3AsFn`).
"""

from __future__ import annotations

from typing import Any

import tvm

from tilelang.backend.sdk import e4m3_as_fn as as_fn

__all__ = ["Float8E4M3AsFn", "as_fn"]


def Float8E4M3AsFn(target: Any = None) -> tvm.transform.Pass:
    """Rewrite ``float8_e4m3`` values as ``float8_e4m3fn`` ones (see the module docstring)."""
    from tilelang.backend.sdk import Float8E4M3AsFn as as_fn_pass

    return as_fn_pass("cpu.float8_e4m3_as_fn")
