"""Queries of the live CUDA device (``tilelang.carver.arch.driver.cuda_driver`` in the reference): properties
through torch, raw attributes through the CUDA runtime.

Without a visible GPU, `get_cuda_device_properties` returns None, `get_num_sms` the CPU cores that run blocks in
parallel (what a persistent grid sized by it needs on the CPU backend) and every other query raises a
`RuntimeError` saying what is missing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from pathlib import Path
from typing import Any

from tilelang.backend.sdk import cpu_parallel_units, cuda_device_properties

__all__ = [
    "cudaDeviceAttrNames", "get_cuda_device_properties", "get_device_name", "get_shared_memory_per_block",
    "get_device_attribute", "get_max_dynamic_shared_size_bytes", "get_persisting_l2_cache_max_size",
    "get_num_sms", "get_registers_per_block",
]

_FORMATS = {"bytes": 1, "kb": 1024, "mb": 1024 * 1024}


class cudaDeviceAttrNames:
    """``cudaDeviceAttr`` values of the CUDA runtime used here."""

    cudaDevAttrMaxThreadsPerBlock: int = 1
    cudaDevAttrMaxSharedMemoryPerBlock: int = 8
    cudaDevAttrMaxRegistersPerBlock: int = 12
    cudaDevAttrMultiProcessorCount: int = 16
    cudaDevAttrMaxSharedMemoryPerMultiprocessor: int = 81
    cudaDevAttrMaxPersistingL2CacheSize: int = 108


def _no_device(what: str, device_id: int) -> RuntimeError:
    return RuntimeError(
        f"cannot read {what}: no CUDA device {device_id} is visible (torch.cuda.is_available() is False or the "
        "index is out of range). This query needs an NVIDIA GPU and a CUDA build of torch; to plan for a GPU "
        "that is not here, use tilelang.carver.arch.CUDA(target, device='H100')."
    )


def get_cuda_device_properties(device_id: int = 0) -> Any | None:
    """torch's properties of CUDA device `device_id`, or None when torch sees no such device."""
    return cuda_device_properties(device_id)


def _props(what: str, device_id: int) -> Any:
    prop = get_cuda_device_properties(device_id)
    if prop is None:
        raise _no_device(what, device_id)
    return prop


def _scaled(value: int, format: str) -> int:
    if format not in _FORMATS:
        raise ValueError(f"format must be one of {', '.join(_FORMATS)}, got {format!r}")
    return int(value) // _FORMATS[format]


def get_device_name(device_id: int = 0) -> str:
    """The device's name as the driver reports it ("NVIDIA H100 80GB HBM3")."""
    return str(_props("the device name", device_id).name)


def get_shared_memory_per_block(device_id: int = 0, format: str = "bytes") -> int:
    """Shared memory a block may use without opting in (48 KiB on current parts), in `format` units."""
    return _scaled(_props("shared memory per block", device_id).shared_memory_per_block, format)


@functools.lru_cache(maxsize=1)
def _cudart() -> ctypes.CDLL:
    names = ["cudart64_13", "cudart64_12", "cudart64_110"] if sys.platform == "win32" else [
        "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
    found = ctypes.util.find_library("cudart")
    if found:
        names.insert(0, found)
    try:  # the runtime that ships with pip CUDA wheels
        import nvidia

        for root in getattr(nvidia, "__path__", []):
            names += [str(p) for p in Path(root).glob("*/lib/libcudart.so*")]
    except ImportError:
        pass
    for name in names:
        try:
            return ctypes.WinDLL(name) if sys.platform == "win32" else ctypes.CDLL(name)
        except OSError:
            continue
    raise RuntimeError("cannot load the CUDA runtime library (libcudart); install the CUDA toolkit or "
                       "`pip install nvidia-cuda-runtime`. Tried: " + ", ".join(names))


def get_device_attribute(attr: int, device_id: int = 0) -> int:
    """One ``cudaDeviceAttr`` value of device `device_id`, read through ``cudaDeviceGetAttribute``."""
    if get_cuda_device_properties(device_id) is None:
        raise _no_device(f"CUDA device attribute {attr}", device_id)
    fn = _cudart().cudaDeviceGetAttribute
    fn.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    value = ctypes.c_int()
    status = fn(ctypes.byref(value), int(attr), int(device_id))
    if status != 0:
        raise RuntimeError(f"cudaDeviceGetAttribute(attr={attr}, device={device_id}) failed with CUDA error {status}")
    return int(value.value)


def get_max_dynamic_shared_size_bytes(device_id: int = 0, format: str = "bytes") -> int:
    """Shared memory of one SM (the most a block can opt in to, plus the driver's reserve), in `format` units."""
    prop = _props("shared memory per multiprocessor", device_id)
    value = getattr(prop, "shared_memory_per_multiprocessor", None)
    if value is None:
        value = get_device_attribute(cudaDeviceAttrNames.cudaDevAttrMaxSharedMemoryPerMultiprocessor, device_id)
    return _scaled(value, format)


def get_persisting_l2_cache_max_size(device_id: int = 0) -> int:
    """The largest L2 set-aside for persisting accesses, in bytes."""
    return get_device_attribute(cudaDeviceAttrNames.cudaDevAttrMaxPersistingL2CacheSize, device_id)


def get_num_sms(device_id: int = 0) -> int:
    """Number of streaming multiprocessors. Without a CUDA device (a program sizing a persistent grid, run on
    the CPU backend): the cores that run blocks at once here, said once per process; another device index
    raises."""
    prop = get_cuda_device_properties(device_id)
    if prop is not None:
        return int(prop.multi_processor_count)
    if device_id != 0:
        raise _no_device("the SM count", device_id)
    return cpu_parallel_units()


def get_registers_per_block(device_id: int = 0) -> int:
    """32-bit registers a block may use."""
    return get_device_attribute(cudaDeviceAttrNames.cudaDevAttrMaxRegistersPerBlock, device_id)
