"""The ``rocm`` target kind (``hip`` is an alias): mcpu normalisation and detection of a local AMD GPU."""

from __future__ import annotations

import warnings

from tilelang.errors import TargetError

SUPPORTED_MCPUS = ("gfx90a", "gfx942", "gfx950", "gfx1100")
DEFAULT_MCPU = "gfx942"


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
    mcpu = str(mcpu).split(":")[0]
    if not mcpu.startswith("gfx"):
        raise TargetError(f"rocm mcpu {mcpu!r} is not a gfx name; supported: {', '.join(SUPPORTED_MCPUS)}")
    return {**config, "mcpu": mcpu}


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
