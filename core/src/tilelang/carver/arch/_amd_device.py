"""Filling an AMD device model (`CDNA`, `RDNA`) from a live ROCm device or from the known-device table."""

from __future__ import annotations

from typing import Any

from tilelang.carver.arch._devices import DeviceSpec, default_device, lookup_device
from tilelang.carver.arch._target import normalize_mcpu
from tilelang.carver.arch.arch_base import TileDevice

__all__ = ["live_rocm_properties", "fill_amd", "compute_version"]


def compute_version(mcpu: str) -> str:
    """HIP's compute version digits of a gfx name, as the runtime reports them: gfx942 -> "94", gfx1151 -> "115"."""
    name = normalize_mcpu(mcpu) or ""
    body = name[3:]
    if len(body) < 3:
        return body or "unknown"
    return f"{body[:-2]}{int(body[-2], 16)}"


def live_rocm_properties(device_id: int = 0) -> Any | None:
    """torch's properties of ROCm device `device_id` (a ROCm build of torch with a visible GPU), else None."""
    try:
        import torch
    except ImportError:
        return None
    if getattr(torch.version, "hip", None) is None:
        return None
    try:
        if not torch.cuda.is_available() or device_id >= torch.cuda.device_count():
            return None
        return torch.cuda.get_device_properties(device_id)
    except (RuntimeError, AssertionError):
        return None


def fill_amd(arch: TileDevice, platform: str, mcpu: str | None, device: str | None) -> None:
    """Set `arch`'s capacities for an AMD `platform` part: the named `device`, the live GPU, or `mcpu`'s entry."""
    prop = None if device is not None else live_rocm_properties()
    if prop is not None and mcpu is not None and normalize_mcpu(getattr(prop, "gcnArchName", "")) not in (None, mcpu):
        prop = None  # the GPU here is another part than the target names: model the target's
    arch.spec = None
    if prop is not None:
        arch.source = "device"
        arch.name = str(prop.name)
        arch.smem_cap = int(getattr(prop, "shared_memory_per_block", 0)) or 64 * 1024
        arch.compute_max_core = int(prop.multi_processor_count)
        arch.warp_size = int(getattr(prop, "warp_size", 64 if platform == "CDNA" else 32))
        arch.l2_cache_size_bytes = int(getattr(prop, "L2_cache_size", 0))
        arch.compute_capability = f"{prop.major}{prop.minor}"
        spec: DeviceSpec | None = None
        try:
            spec = lookup_device(mcpu or "", platform)
        except ValueError:
            pass
        arch.spec = spec
    else:
        spec = lookup_device(device, platform) if device is not None else default_device(platform, mcpu)
        arch.source = "table"
        arch.spec = spec
        arch.name = spec.name
        arch.smem_cap = spec.smem_per_block
        arch.compute_max_core = spec.compute_units
        arch.warp_size = spec.warp_size
        arch.l2_cache_size_bytes = spec.l2_bytes
        arch.compute_capability = compute_version(spec.arch)
    try:
        import tvm

        arch.device = tvm.runtime.device("rocm", 0) if prop is not None else None
    except Exception:
        arch.device = None
