"""Execution backends for CUDA, in preference order. Launching cubins lands with the CUDA issue."""

from __future__ import annotations

from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable


class CudaDriverBackend(ExecutionBackend):
    """Launches cubins through the CUDA driver on torch CUDA tensors."""

    name = "cuda_driver"
    description = "CUDA driver launch of nvcc/NVRTC cubins on torch CUDA tensors"

    def unavailable_reason(self) -> str | None:
        try:
            import torch
        except ImportError:
            return "torch is not installed"
        if not torch.cuda.is_available():
            return "no CUDA GPU is visible to torch"
        return "launching CUDA kernels is not implemented in this version of tilelang-cuda"

    def load(self, artifact: Any) -> Any:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


EXECUTION_BACKENDS = [CudaDriverBackend()]
