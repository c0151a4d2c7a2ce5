"""Compilation entry point: ``tilelang.lower(func, target=None, target_host=None, pass_configs=None)``, with the
reference's `KernelParam`, `is_device_call` and source post-processing callbacks."""

from __future__ import annotations

from typing import Any

from tilelang.engine.callback import (
    register_c_postproc,
    register_cuda_postproc,
    register_hip_postproc,
    register_metal_postproc,
)
from tilelang.engine.lower import lower
from tilelang.engine.param import KernelParam

__all__ = ["lower", "KernelParam", "is_device_call", "register_cuda_postproc", "register_hip_postproc",
           "register_c_postproc", "register_metal_postproc"]


def is_device_call(func: Any) -> bool:
    """Whether PrimFunc `func` is device code after the host/device split (its target is not the host's)."""
    attrs = getattr(func, "attrs", None)
    if attrs is not None and "calling_conv" in attrs:
        return int(attrs["calling_conv"]) == 2  # kDeviceKernelLaunch
    target = attrs.get("target") if attrs is not None else None
    return target is not None and int(target.get_target_device_type()) != 1
