"""`CythonKernelAdapter`: the reference's Cython-wrapped launcher. In this project execution backend ``cython``
maps onto the TVM runtime (`tilelang.backend.execution`): this adapter is the TVM-FFI adapter under the
reference's name, so code that constructs or inspects it keeps working."""

from __future__ import annotations

from typing import Any

from tilelang.jit.adapter.tvm_ffi import TVMFFIKernelAdapter

__all__ = ["CythonKernelAdapter", "is_symbolic_expr"]


def is_symbolic_expr(expr: Any) -> bool:
    """Whether `expr` is a tirx expression that is not a constant."""
    from tvm import tirx

    return isinstance(expr, tirx.PrimExpr) and not isinstance(expr, (tirx.IntImm, tirx.FloatImm))


class CythonKernelAdapter(TVMFFIKernelAdapter):
    """See the module docstring."""
