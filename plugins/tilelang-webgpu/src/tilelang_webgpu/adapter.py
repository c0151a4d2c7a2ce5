"""Choosing the wgpu adapter: ``TILELANG_WGPU_BACKEND`` (vulkan, gl, metal, d3d12) overrides the default."""

from __future__ import annotations

import functools
import os
from typing import Any


@functools.cache
def adapter() -> Any:
    """The wgpu adapter kernels run on (cached per process); raises RuntimeError when none exists."""
    choice = os.environ.get("TILELANG_WGPU_BACKEND", "").strip()
    if choice:
        os.environ.setdefault("WGPU_BACKEND_TYPE", {"gl": "OpenGL", "vulkan": "Vulkan"}.get(choice.lower(), choice))
    import wgpu

    found = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if found is None:
        raise RuntimeError("wgpu found no adapter")
    return found


def adapter_summary() -> str:
    """``"<device> (<backend>, <type>)"`` of the adapter, for reports."""
    info = adapter().info
    return f"{info.get('device', '?')} ({info.get('backend_type', '?')}, {info.get('adapter_type', '?')})"
