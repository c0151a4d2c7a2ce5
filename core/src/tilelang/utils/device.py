"""Which device tensors go to by default, and how many CPU cores this process may use."""

from __future__ import annotations

from typing import Any

from tilelang.env import usable_cores

__all__ = ["get_current_device", "get_available_cpu_count"]  # IS_CUDA / IS_MPS: module attributes, computed on access


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _mps() -> bool:
    import torch

    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def get_current_device() -> Any:
    """The current CUDA device index, ``"mps:0"`` on Apple GPUs, else None (the CPU)."""
    if _cuda():
        import torch

        return torch.cuda.current_device()
    if _mps():
        return "mps:0"
    return None


def get_available_cpu_count() -> int:
    """CPU cores available to this process (its affinity where the OS reports one), at least 1."""
    return usable_cores()


def __getattr__(name: str) -> Any:
    if name == "IS_CUDA":
        return _cuda()
    if name == "IS_MPS":
        return _mps()
    raise AttributeError(f"module 'tilelang.utils.device' has no attribute {name!r}")
