"""Reading targets inside the carver: kind, CUDA arch and AMD ``mcpu`` strings, without importing a backend.

The carver accepts a ``tvm.target.Target``, a config dict (``{"kind": "hip", "mcpu": "gfx1151"}``) or any
object with ``kind`` and ``attrs`` (so a target kind TVM does not define still routes). Strings and dicts go
through `tilelang.determine_target` when a backend serves the kind; with none installed, TVM's own Target is
built directly, so device modelling works on a core-only install.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "resolve_target", "target_kind", "target_attr", "normalize_mcpu", "target_get_mcpu", "rdna_generation",
    "target_get_rdna_generation", "target_is_rdna", "target_is_cdna", "amd_warp_size",
]

_MCPU = re.compile(r"^(gfx[0-9a-f]+)(?::.*)?$", re.IGNORECASE)
# kinds TVM knows under another name
_TVM_KIND = {"cpu": "llvm", "hip": "rocm"}


def resolve_target(target: Any) -> Any:
    """A target object (kind + attrs) for any spelling the carver accepts."""
    if hasattr(target, "kind") and hasattr(target, "attrs"):
        return target
    if target is None:
        raise TypeError("the carver needs a target (a kind such as 'cuda', a dict or a tvm.target.Target), got None")
    from tilelang.backend.target import split_targets
    from tilelang.errors import BackendNotInstalled

    try:
        return split_targets(target).tvm_device
    except BackendNotInstalled:
        from tvm.target import Target

        from tilelang.backend.target import _to_config  # the same spellings determine_target accepts

        config = dict(_to_config(target))
        config["kind"] = _TVM_KIND.get(str(config["kind"]), str(config["kind"]))
        return Target(config)


def target_kind(target: Any) -> str:
    """The kind name of a target object or config dict."""
    if isinstance(target, Mapping):
        return str(target["kind"])
    kind = target.kind
    return kind if isinstance(kind, str) else str(kind.name)


def target_attr(target: Any, name: str, default: Any = None) -> Any:
    """One attribute of a target object or config dict (`default` when absent)."""
    if isinstance(target, Mapping):
        return target.get(name, default)
    attrs = getattr(target, "attrs", None)
    if attrs is None:
        return default
    try:
        value = attrs.get(name, None) if hasattr(attrs, "get") else attrs[name]
    except (KeyError, IndexError):
        value = None
    return default if value is None else value


def normalize_mcpu(mcpu: Any) -> str | None:
    """``"gfx1151:sramecc+:xnack-"`` -> ``"gfx1151"``; None for anything that is not a gfx name."""
    if mcpu is None:
        return None
    match = _MCPU.match(str(mcpu).strip())
    return match.group(1).lower() if match else None


def target_get_mcpu(target: Any) -> str | None:
    """The normalised ``mcpu`` of an AMD target (None when it has none)."""
    return normalize_mcpu(target_attr(target, "mcpu"))


def rdna_generation(mcpu: str | None) -> int | None:
    """The RDNA generation of a gfx name: gfx10xx -> 10, gfx11xx -> 11, gfx12xx -> 12; None otherwise."""
    name = normalize_mcpu(mcpu)
    if name is None:
        return None
    match = re.fullmatch(r"gfx(1[0-9])[0-9a-f]{2}", name)
    return int(match.group(1)) if match else None


def target_get_rdna_generation(target: Any) -> int | None:
    """The RDNA generation of an AMD target's mcpu (None for CDNA or a non-AMD target)."""
    return rdna_generation(target_get_mcpu(target))


def target_is_rdna(target: Any) -> bool:
    """True for RDNA targets with WMMA (gfx11 and gfx12), the ones the carver's RDNA model serves."""
    return target_get_rdna_generation(target) in (11, 12)


def target_is_cdna(target: Any) -> bool:
    """True for CDNA/GCN compute parts (gfx9xx: gfx908, gfx90a, gfx942, gfx950, ...)."""
    mcpu = target_get_mcpu(target)
    return mcpu is not None and re.fullmatch(r"gfx9[0-9a-f]{1,2}", mcpu) is not None


def amd_warp_size(mcpu: str | None) -> int:
    """Wavefront size: 32 on RDNA (gfx10 and newer), 64 on GCN/CDNA."""
    return 32 if rdna_generation(mcpu) is not None else 64
