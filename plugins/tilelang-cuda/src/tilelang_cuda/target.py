"""The ``cuda`` target kind: arch normalisation and detection of a local GPU."""

from __future__ import annotations

import re
import warnings

from tilelang.errors import TargetError

SUPPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a")
DEFAULT_ARCH = "sm_80"
_ARCH = re.compile(r"^sm_(\d+)(a?)$")


def normalize(config: dict) -> dict:
    """Check ``arch`` (default: the local GPU's, else sm_80 with a one-time notice)."""
    arch = config.get("arch")
    if arch is None:
        detected = detect()
        if detected is not None:
            arch = detected["arch"]
        else:
            warnings.warn(f"target 'cuda' without an arch and no GPU here: compiling for {DEFAULT_ARCH}; pass "
                          "{'kind': 'cuda', 'arch': 'sm_90a'} to choose", stacklevel=4)
            arch = DEFAULT_ARCH
    arch = str(arch)
    if _ARCH.match(arch) is None:
        raise TargetError(f"cuda arch {arch!r} is not of the form sm_XY[a]; supported: {', '.join(SUPPORTED_ARCHS)}")
    return {**config, "arch": arch}


def detect() -> dict | None:
    """``{"kind": "cuda", "arch": ...}`` for the first visible NVIDIA GPU, via torch (None without one)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        return None
    major, minor = torch.cuda.get_device_capability(0)
    arch = f"sm_{major}{minor}"
    if major in (9, 10):  # wgmma / tcgen05 need the arch-specific variant
        arch += "a"
    return {"kind": "cuda", "arch": arch}
