"""Device models for the carver: `CUDA`, `CDNA`, `RDNA`, `METAL`, `CPU` and the `get_arch` router.

A model reads the live device when one is present (torch for CUDA/ROCm, sysctl for Apple chips, sysfs for
the CPU) and otherwise the known-device table, so planning for an H100 or an MI300X works on a laptop.
"""

from __future__ import annotations

from typing import Any

from tilelang.carver.arch._target import (
    resolve_target,
    target_get_mcpu,
    target_get_rdna_generation,
    target_is_rdna,
    target_kind,
)
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.arch.cdna import CDNA, is_cdna_arch
from tilelang.carver.arch.cpu import CPU, is_cpu_arch
from tilelang.carver.arch.cuda import (
    CUDA,
    has_mma_support,
    is_ada_arch,
    is_ampere_arch,
    is_cuda_arch,
    is_hopper_arch,
    is_tensorcore_supported_precision,
    is_volta_arch,
)
from tilelang.carver.arch.metal import METAL, is_metal_arch
from tilelang.carver.arch.rdna import RDNA, is_rdna_arch

__all__ = [
    "is_cpu_arch",
    "is_cuda_arch",
    "is_volta_arch",
    "is_ampere_arch",
    "is_ada_arch",
    "is_hopper_arch",
    "is_tensorcore_supported_precision",
    "has_mma_support",
    "is_cdna_arch",
    "is_rdna_arch",
    "is_metal_arch",
    "CUDA",
    "CDNA",
    "RDNA",
    "METAL",
    "CPU",
    "TileDevice",
    "get_arch",
    "auto_infer_current_arch",
    "target_get_mcpu",
    "target_get_rdna_generation",
    "target_is_rdna",
]

_CPU_KINDS = ("llvm", "c", "cpu")
_AMD_KINDS = ("hip", "rocm")


def get_arch(target: Any = "cuda") -> TileDevice:
    """The device model for `target` (a kind, a reference-style string, a dict or a ``tvm.target.Target``).

    cuda -> `CUDA`; llvm / c / cpu -> `CPU`; hip / rocm -> `RDNA` for gfx11/gfx12, else `CDNA`; metal -> `METAL`.
    Routing reads only the target: no device is touched before the chosen model is built.
    """
    target = resolve_target(target)
    kind = target_kind(target)
    if kind == "cuda":
        return CUDA(target)
    if kind in _CPU_KINDS:
        return CPU(target)
    if kind in _AMD_KINDS:
        if target_is_rdna(target) or target_get_rdna_generation(target) is not None:
            if target_get_rdna_generation(target) in (11, 12):
                return RDNA(target)
            raise ValueError(f"RDNA device model currently supports gfx11/gfx12 targets only, got {target}.")
        return CDNA(target)
    if kind == "metal":
        return METAL(target)
    raise ValueError(f"Unsupported target: {kind} (the carver models cuda, hip/rocm, metal and llvm/cpu targets)")


def _mps_available(torch: Any) -> bool:
    mps = getattr(torch, "mps", None)
    check = getattr(mps, "is_available", None)
    if check is None:
        check = getattr(getattr(torch.backends, "mps", None), "is_available", None)
    return bool(check()) if check is not None else False


def auto_infer_current_arch() -> TileDevice:
    """The model of the device kernels would run on here: a ROCm or CUDA GPU, an Apple GPU, else the CPU."""
    import torch

    if getattr(torch.version, "hip", None) is not None and torch.cuda.is_available():
        mcpu = str(getattr(torch.cuda.get_device_properties(0), "gcnArchName", "")).split(":")[0]
        return get_arch({"kind": "hip", "mcpu": mcpu} if mcpu else "hip")
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability(0)
        return get_arch({"kind": "cuda", "arch": f"sm_{major}{minor}"})
    if _mps_available(torch):
        return get_arch("metal")
    return get_arch("llvm")
