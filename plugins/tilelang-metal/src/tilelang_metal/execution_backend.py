"""Execution backends for Metal, in preference order: torch MPS first, then a direct Metal path."""

from __future__ import annotations

import sys
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable


def _mps_reason() -> str | None:
    if sys.platform != "darwin":
        return f"running Metal kernels needs macOS with MPS (this is {sys.platform}); compiling to MSL works here"
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.backends.mps.is_available():
        return "torch reports no MPS device"
    return None


class TorchMPSBackend(ExecutionBackend):
    """Runs MSL through ``torch.mps.compile_shader`` on torch MPS tensors."""

    name = "torch"
    description = "torch.mps.compile_shader on MPS tensors"

    def unavailable_reason(self) -> str | None:
        return _mps_reason() or "launching Metal kernels is not implemented in this version of tilelang-metal"

    def load(self, artifact: Any) -> Any:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


class MetalDirectBackend(ExecutionBackend):
    """Runs MSL through the Metal framework directly (no torch MPS kernels involved)."""

    name = "metal"
    description = "the Metal framework through PyObjC"

    def unavailable_reason(self) -> str | None:
        return _mps_reason() or "the direct Metal path is not implemented in this version of tilelang-metal"

    def load(self, artifact: Any) -> Any:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


EXECUTION_BACKENDS = [TorchMPSBackend(), MetalDirectBackend()]
