"""FP8 dtype selection: the e4m3 / e5m2 flavour the current platform's tensor cores use."""

from __future__ import annotations

from typing import Any, Literal


def determine_fp8_type(fp8_format: Literal["e4m3", "e5m2"] = "e4m3") -> Any:
    """``T.float8_e4m3fn`` / ``T.float8_e5m2`` (CUDA and CPUs), the ``fnuz`` variants on ROCm (except gfx950)."""
    import torch

    from tilelang.language import dtypes

    if fp8_format not in ("e4m3", "e5m2"):
        raise ValueError(f"Unsupported FP8 format: {fp8_format}")
    ocp = dtypes.float8_e4m3fn if fp8_format == "e4m3" else dtypes.float8_e5m2
    fnuz = dtypes.float8_e4m3fnuz if fp8_format == "e4m3" else dtypes.float8_e5m2fnuz
    if getattr(torch.version, "hip", None) is None:
        return ocp
    if not torch.cuda.is_available():
        return fnuz
    arch = getattr(torch.cuda.get_device_properties(0), "gcnArchName", "")
    return ocp if arch.startswith("gfx950") else fnuz


def determine_torch_fp8_type(fp8_format: Literal["e4m3", "e5m2"] = "e4m3") -> Any:
    """The torch dtype of `determine_fp8_type`."""
    import torch

    name = str(determine_fp8_type(fp8_format))
    found = getattr(torch, name, None)
    if found is None:
        raise RuntimeError(f"PyTorch does not expose dtype {name}")
    return found


__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]
