"""The ``rocm`` target kind (``hip`` is an alias): mcpu normalisation, detection of a local AMD GPU, and the
reference's target helpers (`target_get_mcpu`, `target_is_cdna`, `target_is_rdna`, `target_get_warp_size`, ...).

The helpers take a ``tvm.target.Target`` (kind ``rocm``; the reference's TVM fork calls it ``hip``), a config
dict or a kind string, and read only its ``mcpu``: nothing here touches a device.
"""

from __future__ import annotations

import os
import shutil
import warnings
from typing import Any

from tilelang.errors import TargetError

SUPPORTED_MCPUS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1200", "gfx1201")
DEFAULT_MCPU = "gfx942"
ROCM_MTRIPLE = "amdgcn-amd-amdhsa-hcc"


def normalize_rocm_arch(arch: str | None) -> str | None:
    """The gfx name of an arch string with its feature suffixes dropped (``gfx1151:sramecc+:xnack-`` ->
    ``gfx1151``); None for anything that is not a gfx name."""
    if arch is None:
        return None
    name = str(arch).strip().split(":", 1)[0]
    return name if name.startswith("gfx") and len(name) > 3 else None


def rocm_warp_size_for_arch(arch: str | None) -> int | None:
    """64 on GCN/CDNA (gfx9xx), 32 on RDNA (gfx10xx-gfx12xx), None when unknown."""
    name = normalize_rocm_arch(arch)
    if name is None:
        return None
    if name.startswith("gfx9"):
        return 64
    if name.startswith(("gfx10", "gfx11", "gfx12")):
        return 32
    return None


def _attrs(target: Any) -> dict[str, Any]:
    if target is None:
        return {}
    if isinstance(target, str):
        return {"kind": target.split()[0]}
    if isinstance(target, dict):
        return target
    return {"kind": target.kind.name, **{str(k): v for k, v in target.attrs.items()}}


def target_get_mcpu(target: Any) -> str | None:
    """The gfx name the target compiles for (None when it names none)."""
    return normalize_rocm_arch(_attrs(target).get("mcpu"))


def target_is_hip(target: Any) -> bool:
    """Whether the target is an AMD GPU target (kind ``rocm``, or ``hip``)."""
    return str(_attrs(target).get("kind")) in ("rocm", "hip")


def target_is_cdna(target: Any) -> bool:
    """CDNA data-centre GPUs: gfx908 (MI100), gfx90a (MI200), gfx94x (MI300), gfx950 (MI350)."""
    mcpu = target_get_mcpu(target) or ""
    return target_is_hip(target) and mcpu.startswith(("gfx908", "gfx90a", "gfx94", "gfx95"))


def target_is_gfx950(target: Any) -> bool:
    return target_is_hip(target) and (target_get_mcpu(target) or "").startswith("gfx950")


def target_get_rdna_generation(target: Any) -> int:
    """11 for gfx11xx (RDNA3/3.5), 12 for gfx12xx (RDNA4), 0 for anything else."""
    mcpu = target_get_mcpu(target) or ""
    if not target_is_hip(target):
        return 0
    if mcpu.startswith("gfx11"):
        return 11
    if mcpu.startswith("gfx12"):
        return 12
    return 0


def target_is_rdna(target: Any) -> bool:
    """RDNA GPUs with matrix cores (WMMA): gfx11xx and gfx12xx."""
    return target_get_rdna_generation(target) in (11, 12)


def target_get_warp_size(target: Any) -> int:
    """The wavefront size: the target's ``thread_warp_size`` when set, else what its gfx name implies (64)."""
    attrs = _attrs(target)
    if attrs.get("thread_warp_size") is not None:
        return int(attrs["thread_warp_size"])
    return rocm_warp_size_for_arch(target_get_mcpu(target)) or 64


def normalize(config: dict) -> dict:
    """``hip`` -> ``rocm``; check ``mcpu`` (default: the local GPU's, else gfx942 with a one-time notice)."""
    config = {**config, "kind": "rocm"}
    mcpu = config.get("mcpu")
    if mcpu is None:
        detected = detect()
        if detected is not None:
            mcpu = detected["mcpu"]
        else:
            warnings.warn(f"target 'rocm' without an mcpu and no AMD GPU here: compiling for {DEFAULT_MCPU}; pass "
                          "{'kind': 'rocm', 'mcpu': 'gfx90a'} to choose", stacklevel=4)
            mcpu = DEFAULT_MCPU
    name = normalize_rocm_arch(mcpu)
    if name is None:
        raise TargetError(f"rocm mcpu {str(mcpu)!r} is not a gfx name; supported: {', '.join(SUPPORTED_MCPUS)}")
    config = {**config, "mcpu": name}
    warp = rocm_warp_size_for_arch(name)
    if warp is not None and "thread_warp_size" not in config:
        config["thread_warp_size"] = warp
    return config


def find_rocm_path() -> str:
    """The ROCm install root: ``$ROCM_PATH``, else the prefix of the ``hipcc`` on PATH, else ``/opt/rocm`` when it
    holds ``bin/hipcc`` (RuntimeError when none is found)."""
    if "ROCM_PATH" in os.environ:
        return os.environ["ROCM_PATH"]
    hipcc = shutil.which("hipcc")
    if hipcc is not None:
        return os.path.realpath(os.path.join(hipcc, "..", ".."))
    if os.path.exists(os.path.join("/opt/rocm", "bin", "hipcc")):
        return "/opt/rocm"
    raise RuntimeError("Cannot find ROCm path: set ROCM_PATH, or put ROCm's hipcc on PATH")


def check_hip_availability() -> bool:
    """Whether a ROCm (HIP) toolkit is installed here (`find_rocm_path` finds one); a GPU is not required."""
    try:
        find_rocm_path()
    except RuntimeError:
        return False
    return True


def detect() -> dict | None:
    """``{"kind": "rocm", "mcpu": ...}`` for the first visible AMD GPU, via torch (None without one)."""
    try:
        import torch
    except ImportError:
        return None
    if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
        return None
    arch = torch.cuda.get_device_properties(0).gcnArchName
    return {"kind": "rocm", "mcpu": arch.split(":")[0]}
