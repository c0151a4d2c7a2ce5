"""cpu.float8_e4m3_as_fn: on the CPU, ``float8_e4m3`` is ``float8_e4m3fn`` (no infinities, largest value 448),
as in the reference TileLang off ROCm: torch tensors of such a parameter are ``torch.float8_e4m3fn`` (the JIT
allocates its outputs so), and the argument checks must accept them. Every ``float8_e4m3`` buffer (parameters
included), value and conversion is rewritten to ``float8_e4m3fn`` before layout inference.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.sdk import retype
from tilelang.transform import utils as C

_E4M3 = "float8_e4m3"


def as_fn(dtype: str) -> str | None:
    """``float8_e4m3fn`` (with `dtype`'s lanes) for ``float8_e4m3`` / ``float8_e4m3xN``, else None."""
    if dtype == _E4M3 or dtype.startswith(_E4M3 + "x"):
        return _E4M3 + "fn" + dtype[len(_E4M3):]
    return None


def Float8E4M3AsFn(target: Any = None) -> tvm.transform.Pass:
    """Rewrite ``float8_e4m3`` values as ``float8_e4m3fn`` ones (see the module docstring)."""

    @C.prim_func_pass("cpu.float8_e4m3_as_fn")
    def float8_e4m3_as_fn(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        return retype(func, as_fn)

    return float8_e4m3_as_fn
