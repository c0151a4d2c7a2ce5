"""Execution backends for WebGPU, in preference order. Dispatching WGSL lands with the WebGPU issue."""

from __future__ import annotations

import importlib.util
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable


class WgpuBackend(ExecutionBackend):
    """Dispatches WGSL compute shaders through wgpu-py; tensors are copied in and out of GPU buffers."""

    name = "wgpu"
    description = "wgpu-py (Vulkan, Metal, D3D12 or GL; Mesa llvmpipe/lavapipe on CPU-only machines)"

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("wgpu") is None:
            return "the wgpu package is not installed (pip install wgpu)"
        try:
            from tilelang_webgpu.adapter import adapter

            adapter()
        except Exception as exc:
            return f"no wgpu adapter: {exc}"
        return "dispatching WebGPU kernels is not implemented in this version of tilelang-webgpu"

    def load(self, artifact: Any) -> Any:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


EXECUTION_BACKENDS = [WgpuBackend()]
