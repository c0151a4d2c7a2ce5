"""The CUDA include directories NVRTC needs (it has no default search path) for a toolkit at ``cuda_home``."""

from __future__ import annotations

import os.path as osp
import platform
import sys

__all__ = ["discover_cuda_include_paths"]


def _target_include_path(cuda_home: str, machine: str | None = None) -> str:
    """``<cuda_home>/targets/<x86_64|sbsa>-linux/include`` for `machine` (default: this one)."""
    machine = machine or platform.machine()
    arch = "sbsa-linux" if machine in ("aarch64", "arm64") else "x86_64-linux"
    return osp.join(cuda_home, "targets", arch, "include")


def discover_cuda_include_paths(cuda_home: str, machine: str | None = None, system: str | None = None) -> list[str]:
    """Include directories for NVRTC under `cuda_home`.

    pip's CUDA wheels put headers in a flat ``include`` tree, toolkits in ``targets/<arch>-linux/include``; each
    layout present is returned with its ``cccl`` subdirectory when it has one (split or overlaid installs use
    both). With neither present (a toolkit not mounted yet), the flat and target directories are returned
    anyway, so NVRTC reports the missing header. On Windows: ``include`` and ``include/cccl``.
    """
    flat = osp.join(cuda_home, "include")
    if (system or sys.platform).startswith("win32"):
        return [flat, osp.join(flat, "cccl")]
    target = _target_include_path(cuda_home, machine)
    found: list[str] = []
    for directory in (flat, target):
        if osp.isdir(directory):
            found.append(directory)
            if osp.isdir(osp.join(directory, "cccl")):
                found.append(osp.join(directory, "cccl"))
    return found or [flat, target, osp.join(target, "cccl")]
