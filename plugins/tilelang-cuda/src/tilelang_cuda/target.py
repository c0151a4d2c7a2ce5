"""The ``cuda`` target kind (arch normalisation, detection of a local GPU) and its CuTeDSL variant.

Archs are exact SM tokens: ``sm_80``, ``sm_90a`` (arch-specific), ``sm_100f`` (family); ``compute_XY`` is
refused. An optional ``code`` list (``["sm_100a", "sm_103a"]``) names the SMs of one fatbin (nvcc
``-gencode``); it is checked here, but apache-tvm 0.27's cuda Target has no such option, so only config dicts
carry it. A CuTeDSL target is a cuda target whose keys include ``cutedsl`` (``{"kind": "cutedsl", ...}``
normalises to one).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from tilelang.errors import InvalidTargetError, TargetError

SUPPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_100f", "sm_120")
DEFAULT_ARCH = "sm_80"
CUTEDSL_KEY = "cutedsl"
_ARCH = re.compile(r"^sm_(\d{2,3})([af]?)$")

__all__ = ["normalize", "detect", "normalize_cutedsl", "normalize_cutedsl_target", "check_cuda_availability",
           "target_is_cuda", "target_is_volta", "target_is_turing", "target_is_ampere", "target_is_hopper",
           "target_is_sm120", "target_has_async_copy", "target_has_ldmatrix", "target_has_stmatrix",
           "target_has_bulk_copy", "is_cutedsl_target", "is_plain_cuda_target"]


# ---------------------------------------------------------------------------------------------- detection
def _detect_torch_cuda_arch() -> str | None:
    """``sm_XY`` of torch's current CUDA device (``sm_90a`` from Hopper on), None without a visible NVIDIA GPU."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        return None
    from tilelang_cuda.contrib import nvcc

    try:
        device = torch.cuda.current_device()
    except (RuntimeError, AssertionError):
        device = 0
    capability = torch.cuda.get_device_capability(device)
    return f"sm_{nvcc.get_target_arch(capability)}" if capability else None


def check_cuda_availability() -> bool:
    """Whether a CUDA toolkit is found (`tilelang_cuda.contrib.nvcc.find_cuda_path`)."""
    from tilelang_cuda.contrib import nvcc

    try:
        nvcc.find_cuda_path()
    except RuntimeError:
        return False
    return True


def detect() -> dict | None:
    """``{"kind": "cuda", "arch": ...}`` for the local NVIDIA GPU (None without one)."""
    arch = _detect_torch_cuda_arch()
    return None if arch is None else {"kind": "cuda", "arch": arch}


# ---------------------------------------------------------------------------------------------- normalisation
def _check_code(code: Any) -> list[str]:
    from tilelang_cuda.contrib import nvcc

    try:
        return nvcc.get_target_code_list(code)
    except ValueError as exc:
        raise TargetError(str(exc)) from None


def normalize(config: dict) -> dict:
    """Check ``arch`` (default: the local GPU's, else sm_80 with a notice) and the optional ``code`` list."""
    arch = config.get("arch")
    if arch is None:
        arch = _detect_torch_cuda_arch()
        if arch is None:
            warnings.warn(f"target 'cuda' without an arch and no GPU here: compiling for {DEFAULT_ARCH}; pass "
                          "{'kind': 'cuda', 'arch': 'sm_90a'} to choose", stacklevel=4)
            arch = DEFAULT_ARCH
    arch = str(arch)
    if _ARCH.match(arch) is None:
        raise TargetError(f"cuda arch {arch!r} is not an exact SM token of the form sm_XY[a|f] (compute_XY is not "
                          f"accepted); e.g. {', '.join(SUPPORTED_ARCHS)}")
    out = {**config, "arch": arch}
    if "code" in config:
        out["code"] = _check_code(config["code"])
    return out


def _keys_of(target: Any) -> list[str]:
    keys = target.get("keys") if isinstance(target, dict) else getattr(target, "keys", None)
    return [str(k) for k in keys or ()]


def _kind_of(target: Any) -> str:
    if isinstance(target, dict):
        return str(target.get("kind"))
    kind = getattr(target, "kind", None)
    return str(getattr(kind, "name", kind))


def is_cutedsl_target(target: Any) -> bool:
    """A cuda target carrying the ``cutedsl`` key (a tvm Target or a config dict)."""
    return _kind_of(target) == "cuda" and CUTEDSL_KEY in _keys_of(target)


def is_plain_cuda_target(target: Any) -> bool:
    """A cuda target without the ``cutedsl`` key."""
    return _kind_of(target) == "cuda" and CUTEDSL_KEY not in _keys_of(target)


def _with_cutedsl_key(config: dict) -> dict:
    keys = config.get("keys") or ("cuda", "gpu")
    return {**config, "keys": list(dict.fromkeys([*map(str, keys), CUTEDSL_KEY]))}


def normalize_cutedsl(config: dict) -> dict:
    """The ``cutedsl`` kind: needs the CuTe DSL installed; becomes a cuda config with the ``cutedsl`` key."""
    from tilelang_cuda.adapters.cutedsl import checks

    try:
        checks.check_cutedsl_available()
    except ImportError as err:
        raise InvalidTargetError(f"CuTeDSL backend is not available: {err}") from err
    return _with_cutedsl_key(normalize({**config, "kind": "cuda"}))


def normalize_cutedsl_target(target: Any) -> Any:
    """`target` as a CuTeDSL ``tvm.target.Target``, or None when it is not one (the reference's helper).

    A cuda Target with the key is returned as is; ``{"kind": "cutedsl", ...}`` and ``"cutedsl"`` (the local GPU's
    arch) become cuda Targets with the key; dicts spelling such a cuda target directly are accepted too. Whether
    the CuTe DSL is installed is not checked here.
    """
    from tvm.target import Target

    if isinstance(target, Target):
        return target if is_cutedsl_target(target) else None
    if isinstance(target, dict):
        config = {**target, "kind": "cuda"} if target.get("kind") == "cutedsl" else dict(target)
        if target.get("kind") == "cutedsl":
            config = _with_cutedsl_key(config)
        try:
            built = Target(config)
        except Exception:
            return None
        return built if is_cutedsl_target(built) else None
    if isinstance(target, str) and target.strip() == "cutedsl":
        arch = _detect_torch_cuda_arch()
        return Target(_with_cutedsl_key({"kind": "cuda", **({"arch": arch} if arch else {})}))
    return None


# ---------------------------------------------------------------------------------------------- predicates
def _capability(target: Any) -> tuple[int, int] | None:
    """``(major, minor)`` of a cuda target's arch (None for other kinds or without an arch)."""
    if _kind_of(target) != "cuda":
        return None
    arch = target.get("arch") if isinstance(target, dict) else (
        target.attrs["arch"] if "arch" in target.attrs else None)
    match = _ARCH.match(str(arch)) if arch is not None else None
    if match is None:
        return None
    digits = match.group(1)
    return int(digits[:-1]), int(digits[-1])


def target_is_cuda(target: Any) -> bool:
    return _kind_of(target) == "cuda"


def target_is_volta(target: Any) -> bool:
    """sm_70 / sm_72."""
    cap = _capability(target)
    return cap is not None and cap[0] == 7 and cap[1] < 5


def target_is_turing(target: Any) -> bool:
    """sm_75."""
    return _capability(target) == (7, 5)


def target_is_ampere(target: Any) -> bool:
    """sm_80 ... sm_89."""
    cap = _capability(target)
    return cap is not None and cap[0] == 8


def target_is_hopper(target: Any) -> bool:
    """sm_90 / sm_90a."""
    cap = _capability(target)
    return cap is not None and cap[0] == 9


def target_is_sm120(target: Any) -> bool:
    """sm_120 and its variants (consumer Blackwell)."""
    cap = _capability(target)
    return cap is not None and cap[0] == 12


def target_has_async_copy(target: Any) -> bool:
    """cp.async: sm_80 and on."""
    cap = _capability(target)
    return cap is not None and cap >= (8, 0)


def target_has_ldmatrix(target: Any) -> bool:
    """ldmatrix: sm_75 and on."""
    cap = _capability(target)
    return cap is not None and cap >= (7, 5)


def target_has_stmatrix(target: Any, is_m16n8: bool = False) -> bool:
    """stmatrix: sm_90 and on (the m16n8 shapes from sm_100 on)."""
    cap = _capability(target)
    return cap is not None and cap >= ((10, 0) if is_m16n8 else (9, 0))


def target_has_bulk_copy(target: Any) -> bool:
    """TMA bulk copies: sm_90 and on."""
    cap = _capability(target)
    return cap is not None and cap >= (9, 0)
