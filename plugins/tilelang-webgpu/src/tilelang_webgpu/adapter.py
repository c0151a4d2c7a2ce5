"""The wgpu adapter and device kernels run on: one of each per process.

``TILELANG_WGPU_BACKEND`` picks the adapter's backend (``vulkan``, ``gl``, ``metal``, ``d3d12``); unset, wgpu
chooses (on a CPU-only Linux machine: Mesa lavapipe through Vulkan when ``mesa-vulkan-drivers`` is installed,
else llvmpipe through OpenGL). The device is requested with every optional feature kernels may use that the
adapter offers (`features` lists them, for codegen decisions) and with the adapter's own compute limits.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
import threading
from typing import Any

from tilelang.errors import ToolchainMissing

__all__ = ["adapter", "device", "features", "limits", "has_feature", "timestamp_period_ns", "adapter_summary",
           "BACKEND_ENV"]

BACKEND_ENV = "TILELANG_WGPU_BACKEND"
# TILELANG_WGPU_BACKEND value -> wgpu-native BackendType name
_BACKENDS = {"vulkan": "Vulkan", "gl": "OpenGL", "opengl": "OpenGL", "gles": "OpenGLES", "metal": "Metal",
             "d3d12": "D3D12", "dx12": "D3D12"}
# optional features a kernel may rely on, requested whenever the adapter offers them
OPTIONAL_FEATURES = ("subgroup", "subgroup-barrier", "shader-f16", "shader-float32-atomic", "shader-int64",
                     "timestamp-query", "timestamp-query-inside-passes")
# limits raised from WebGPU's defaults to what the adapter supports
_RAISED_LIMITS = ("max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
                  "max-compute-workgroup-size-x", "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
                  "max-storage-buffer-binding-size", "max-buffer-size", "max-storage-buffers-per-shader-stage")
_LOCK = threading.Lock()


def _quiet_runtime_dir() -> None:
    """Mesa's lavapipe warns on every start when ``XDG_RUNTIME_DIR`` is unset: point it at a private directory."""
    if os.environ.get("XDG_RUNTIME_DIR") or os.name != "posix":
        return
    path = os.path.join(tempfile.gettempdir(), f"tilelang-xdg-{os.getuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = path
    except OSError:
        pass


def _requested_backend() -> str | None:
    choice = os.environ.get(BACKEND_ENV, "").strip()
    if not choice:
        return None
    name = _BACKENDS.get(choice.lower())
    if name is None:
        names = ", ".join(sorted(_BACKENDS))
        raise ToolchainMissing(f"{BACKEND_ENV}={choice!r} is not a wgpu backend; use one of: {names}")
    return name


@functools.cache
def adapter() -> Any:
    """The wgpu adapter (cached per process); raises `ToolchainMissing` when wgpu or an adapter is missing."""
    with _LOCK:
        backend = _requested_backend()
        try:
            import wgpu
        except ImportError as exc:
            raise ToolchainMissing("the wgpu package is not installed: pip install wgpu") from exc
        _quiet_runtime_dir()
        saved = os.environ.get("WGPU_BACKEND_TYPE")
        log = logging.getLogger("wgpu")
        level = log.level
        if backend is not None:  # wgpu-py reads the forced backend from this variable at request time
            os.environ["WGPU_BACKEND_TYPE"] = backend
            log.setLevel(max(level, logging.ERROR))  # and logs a warning saying so
        try:
            found = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as exc:
            where = f" with {BACKEND_ENV}={os.environ[BACKEND_ENV]}" if backend else ""
            raise ToolchainMissing(
                f"wgpu found no adapter{where}: {exc}. On Linux without a GPU install Mesa "
                "(apt-get install mesa-vulkan-drivers libvulkan1) or unset " + BACKEND_ENV) from exc
        finally:
            log.setLevel(level)
            if backend is not None:
                if saved is None:
                    os.environ.pop("WGPU_BACKEND_TYPE", None)
                else:
                    os.environ["WGPU_BACKEND_TYPE"] = saved
        if found is None:
            raise ToolchainMissing("wgpu found no adapter")
        got = str(found.info.get("backend_type", ""))
        if backend is not None and got.lower() != backend.lower():
            raise ToolchainMissing(f"{BACKEND_ENV}={os.environ[BACKEND_ENV]} asked for {backend}, "
                                   f"but wgpu returned a {got} adapter ({found.summary})")
        return found


@functools.cache
def device() -> Any:
    """The process's wgpu device, with every optional feature in `OPTIONAL_FEATURES` the adapter offers."""
    found = adapter()
    offered = set(found.features)
    wanted = [f for f in OPTIONAL_FEATURES if f in offered]
    caps = found.limits
    required = {k: caps[k] for k in _RAISED_LIMITS if k in caps}
    return found.request_device_sync(required_features=wanted, required_limits=required,
                                     label="tilelang-webgpu")


def features() -> frozenset[str]:
    """The optional features the device has (names as in WebGPU: ``"subgroup"``, ``"shader-f16"``, ...)."""
    return frozenset(str(f) for f in device().features) & frozenset(OPTIONAL_FEATURES)


def has_feature(name: str) -> bool:
    """Whether the device has WebGPU feature `name` (``"subgroup"``, ``"shader-f16"``, ``"timestamp-query"``...)."""
    return name in device().features


def limits() -> dict[str, int]:
    """The device's limits (``{"max-compute-invocations-per-workgroup": 1024, ...}``)."""
    return dict(device().limits)


def timestamp_period_ns() -> float:
    """Nanoseconds per timestamp-query tick (wgpu resolves raw ticks; 1.0 where it cannot be asked)."""
    try:
        from wgpu.backends.wgpu_native._api import libf

        return float(libf.wgpuQueueGetTimestampPeriod(device().queue._internal)) or 1.0
    except Exception:
        return 1.0


def adapter_summary() -> str:
    """``"<device> (<backend>, <type>)"`` of the adapter, for reports."""
    info = adapter().info
    return f"{info.get('device', '?')} ({info.get('backend_type', '?')}, {info.get('adapter_type', '?')})"
