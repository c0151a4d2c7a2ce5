"""Execution backends for ROCm, in preference order. Launching code objects lands with the ROCm issue."""

from __future__ import annotations

from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable


class HipRuntimeBackend(ExecutionBackend):
    """Launches hsaco code objects through the HIP runtime on torch ROCm tensors."""

    name = "hip_runtime"
    description = "HIP runtime launch of hsaco code objects on torch ROCm tensors"

    def unavailable_reason(self) -> str | None:
        try:
            import torch
        except ImportError:
            return "torch is not installed"
        if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
            return "no AMD GPU is visible to a ROCm build of torch"
        return "launching ROCm kernels is not implemented in this version of tilelang-rocm"

    def load(self, artifact: Any) -> Any:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


EXECUTION_BACKENDS = [HipRuntimeBackend()]
