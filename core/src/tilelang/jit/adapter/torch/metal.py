"""`MetalKernelAdapter`: runs a Metal kernel through torch's MPS backend (``torch.mps.compile_shader``).

In this project the Metal backend's ``torch`` execution backend does the launching (`tilelang.metal`); this
adapter presents an MSL source + launch geometry under the reference's interface and needs an Apple GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.jit.adapter.base import BaseKernelAdapter

__all__ = ["MetalKernelAdapter"]


class MetalKernelAdapter(BaseKernelAdapter):
    def __init__(self, params: list[Any], result_idx: Any, func_or_mod: Any, device_mod: Any = None,
                 kernel_global_source: str | None = None, verbose: bool = False, **_: Any):
        self.kernel_global_source = kernel_global_source
        self.device_mod = device_mod
        self.func_or_mod = func_or_mod
        self.verbose = verbose
        super().__init__(func_or_mod, params, result_idx)

    def _convert_torch_func(self) -> Callable[..., Any]:
        def func(*args: Any) -> Any:
            import torch

            if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
                raise RuntimeError("MetalKernelAdapter needs an Apple GPU with torch's MPS backend; compile with "
                                   "tilelang.compile(..., target='metal') and run the kernel on a Mac, or use the "
                                   "kernel source (get_kernel_source()) elsewhere")
            raise RuntimeError("launch Metal kernels through tilelang.compile(..., target='metal', "
                               "execution_backend='torch'); this adapter holds the source only")

        return func

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        return self.kernel_global_source or ""
