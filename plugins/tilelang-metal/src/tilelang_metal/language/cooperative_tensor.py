"""Metal 4 cooperative-tensor operators (``T.cooperative_tensor_*``): named here, not offered one by one.

Under a ``metal4`` target ``T.gemm`` itself lowers to MetalPerformancePrimitives ``tensor_ops::matmul2d`` on
cooperative tensors (`tilelang_metal.tileops.gemm_mpp`, Apple M5 and newer); elsewhere to 8x8 simdgroup
matrices. The per-fragment operators exist for reference programs to import and raise a clear error when called.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ("cooperative_tensor_fill", "cooperative_tensor_load", "cooperative_tensor_multiply_accumulate",
           "cooperative_tensor_store")


def _not_offered(name: str) -> NoReturn:
    raise NotImplementedError(
        f"T.{name}: Metal 4 cooperative tensors are not offered as separate operators by tilelang-metal; write "
        "T.gemm, which lowers to MetalPerformancePrimitives matmul2d on cooperative tensors under a metal4 target "
        "and to 8x8 simdgroup matrices (T.simdgroup_load / T.simdgroup_multiply_accumulate) elsewhere")


def cooperative_tensor_fill(*args: Any, **kwargs: Any) -> NoReturn:
    """Fill a cooperative tensor (not offered: see the module docstring)."""
    _not_offered("cooperative_tensor_fill")


def cooperative_tensor_load(*args: Any, **kwargs: Any) -> NoReturn:
    """Load a cooperative tensor (not offered: see the module docstring)."""
    _not_offered("cooperative_tensor_load")


def cooperative_tensor_store(*args: Any, **kwargs: Any) -> NoReturn:
    """Store a cooperative tensor (not offered: see the module docstring)."""
    _not_offered("cooperative_tensor_store")


def cooperative_tensor_multiply_accumulate(*args: Any, **kwargs: Any) -> NoReturn:
    """Multiply-accumulate cooperative tensors (not offered: see the module docstring)."""
    _not_offered("cooperative_tensor_multiply_accumulate")
