"""The live GPU as torch reports it (no vendor runtime is loaded here): device properties and the number of
blocks that run at once, which is the CPU's cores when no GPU is visible."""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["cuda_device_properties", "cpu_parallel_units", "num_parallel_units"]

logger = logging.getLogger("tilelang.carver")
_WARNED: list[bool] = []


def cuda_device_properties(device_id: int = 0) -> Any | None:
    """torch's properties of GPU `device_id` (``torch.cuda``), or None when torch sees no such device."""
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available() or device_id >= torch.cuda.device_count():
            return None
        return torch.cuda.get_device_properties(torch.device("cuda", device_id))
    except (RuntimeError, AssertionError):
        return None


def cpu_parallel_units() -> int:
    """The cores that run blocks at once here (the CPU backend's counterpart of SMs); said once per process,
    since a caller asked for a GPU's SM count."""
    from tilelang.env import usable_cores

    cores = usable_cores()
    if not _WARNED:
        _WARNED.append(True)
        logger.warning("get_num_sms(): no CUDA device is visible; returning the %d CPU cores that run blocks in "
                       "parallel here (the CPU backend's counterpart of SMs)", cores)
    return cores


def num_parallel_units() -> int:
    """SMs of GPU 0 when torch sees one, else `cpu_parallel_units` (what a persistent grid is sized by)."""
    prop = cuda_device_properties(0)
    return int(prop.multi_processor_count) if prop is not None else cpu_parallel_units()
