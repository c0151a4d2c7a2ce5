"""Roller policies: `DefaultPolicy` (SIMT kernels) and `TensorCorePolicy` (matrix-unit kernels)."""

from tilelang.carver.roller.policy.default import DefaultPolicy
from tilelang.carver.roller.policy.tensorcore import TensorCorePolicy

__all__ = ["DefaultPolicy", "TensorCorePolicy"]
