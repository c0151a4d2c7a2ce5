"""Float8E4M3AsFn: on CUDA, ``float8_e4m3`` is ``float8_e4m3fn`` (``__nv_fp8_e4m3``: no infinities, largest
value 448), as in the reference TileLang, whose code generator and argument checks take one for the other; torch
tensors of such a parameter are ``torch.float8_e4m3fn``.

TVM's CUDA code generator knows only the ``fn`` type ("Unsupported FP8 type in CUDA codegen"), so every
``float8_e4m3`` buffer (parameters included), value and conversion is rewritten to ``float8_e4m3fn`` before
layout inference (core's `Float8E4M3AsFn`).
"""

from __future__ import annotations

from typing import Any

import tvm

from tilelang.backend.sdk import e4m3_as_fn as as_fn

__all__ = ["Float8E4M3AsFn", "as_fn"]


def Float8E4M3AsFn(target: Any = None) -> tvm.transform.Pass:
    """Rewrite ``float8_e4m3`` values as ``float8_e4m3fn`` ones (see the module docstring)."""
    from tilelang.backend.sdk import Float8E4M3AsFn as as_fn_pass

    return as_fn_pass("cuda.float8_e4m3_as_fn")
