"""Metal target facts (``tilelang.metal.target``): is there an Apple GPU here, does it have Metal 4, is a target
Metal. The ``metal`` target kind itself (its detection for ``target="auto"``) is registered by `tilelang_metal.backend`.
"""

from __future__ import annotations

import platform
import re
import subprocess
from typing import Any

__all__ = ["check_metal4_availability", "check_metal_availability", "normalize_metal_target", "target_is_metal",
           "target_metal_supports_metal4"]

METAL4_MIN_MACOS = 26  # macOS and SDK major version with Metal 4
METAL4_MIN_APPLE_CHIP = 5  # Apple M5: the first GPU with the tensor units cooperative tensors use


def check_metal_availability() -> bool:
    """Whether this is an Apple-silicon Mac (the machines Metal kernels run on)."""
    release, _, machine = platform.mac_ver()
    return bool(release) and machine == "arm64"


def _major(version: str | None) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return 0


def _stdout(cmd: list[str]) -> str | None:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def check_metal4_availability() -> bool:
    """Whether this Mac has Metal 4 tensor operations: macOS and its SDK 26 or newer on an Apple M5 or newer."""
    release, _, machine = platform.mac_ver()
    if machine != "arm64" or _major(release) < METAL4_MIN_MACOS:
        return False
    if _major(_stdout(["xcrun", "-sdk", "macosx", "--show-sdk-version"])) < METAL4_MIN_MACOS:
        return False
    chip = re.search(r"\bApple M(\d+)\b", _stdout(["sysctl", "-n", "machdep.cpu.brand_string"]) or "")
    return chip is not None and int(chip.group(1)) >= METAL4_MIN_APPLE_CHIP


def _config(metal4: bool) -> dict[str, Any]:
    return {"kind": "metal", "keys": ["metal", "gpu", *(["metal4"] if metal4 else [])]}


def normalize_metal_target(target: Any) -> Any:
    """`target` as a Metal ``tvm.target.Target`` (``"metal"`` gets the ``metal4`` key when this Mac has Metal 4),
    or None when it names another kind."""
    from tvm.target import Target

    if isinstance(target, Target):
        return target if str(target.kind.name) == "metal" else None
    if isinstance(target, dict):
        return Target(target) if target.get("kind") == "metal" else None
    if isinstance(target, str) and target.strip() == "metal":
        return Target(_config(check_metal4_availability()))
    return None


def _kind_and_keys(target: Any) -> tuple[str, list[str]]:
    if isinstance(target, dict):
        return str(target.get("kind")), [str(k) for k in target.get("keys", ())]
    if isinstance(target, str):
        return target.strip(), []
    return str(target.kind.name), [str(k) for k in target.keys]


def target_is_metal(target: Any) -> bool:
    """Whether `target` (a Target, a config dict or a kind name) is a Metal target."""
    return _kind_and_keys(target)[0] == "metal"


def target_metal_supports_metal4(target: Any) -> bool:
    """Whether Metal `target` carries the ``metal4`` key (Metal 4 tensor operations)."""
    kind, keys = _kind_and_keys(target)
    return kind == "metal" and "metal4" in keys
