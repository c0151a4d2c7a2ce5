"""Metal 4 cooperative-tensor operators (``T.cooperative_tensor_*``): named here, not offered.

The reference lowers Metal 4 GEMMs to MetalPerformancePrimitives ``tensor_ops::matmul2d`` on cooperative
tensors (Apple M5 and newer). tilelang-metal lowers every ``T.gemm`` to 8x8 simdgroup matrices instead (Apple
GPUs since M1), so these operators exist for reference programs to import and raise a clear error when called.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ("cooperative_tensor_fill", "cooperative_tensor_load", "cooperative_tensor_multiply_accumulate",
           "cooperative_tensor_store")


def _not_offered(name: str) -> NoReturn:
    raise NotImplementedError(
        f"T.{name}: Metal 4 cooperative tensors (MetalPerformancePrimitives tensor_ops) are not offered by "
        "tilelang-metal; it lowers T.gemm to 8x8 simdgroup matrices (T.simdgroup_load / "
        "T.simdgroup_multiply_accumulate / T.simdgroup_store), which every Apple GPU runs")


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
