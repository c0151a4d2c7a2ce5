"""What a bug report needs, in one text (``tilelang env --report``): versions (Python, platform, TileLang and its
backends, torch, TVM, NumPy, GPU drivers), the devices torch and the backends see, each backend's toolchain and
execution backends, and every effective setting with its source.

`bug_report` gathers it as a dict (``--report --json`` prints that); `format_report` writes the text. A part that
fails to gather says so in its place: a report is most needed when something is broken.
"""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

__all__ = ["bug_report", "format_report"]

_PACKAGES = ("tilelang-core", "torch", "apache-tvm", "apache-tvm-ffi", "numpy", "cuda-bindings", "nvidia-cuda-nvrtc",
             "wgpu", "ziglang", "tilelang")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _first_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().strip() or None
    except OSError:
        return None


def _drivers() -> dict[str, str]:
    """GPU kernel drivers the system reports (Linux: the NVIDIA and amdgpu modules)."""
    found = {"nvidia": _first_line("/proc/driver/nvidia/version"), "amdgpu": _first_line("/sys/module/amdgpu/version")}
    return {k: v for k, v in found.items() if v} or {"none": "no NVIDIA or AMD GPU driver found"}


def _devices() -> dict[str, Any]:
    """What torch sees, and the target ``target="auto"`` resolves to."""
    out: dict[str, Any] = {}
    try:
        import torch

        cuda = torch.cuda.is_available()
        out["torch.cuda"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if cuda else []
        out["torch.version.cuda"] = torch.version.cuda
        out["torch.version.hip"] = getattr(torch.version, "hip", None)
        mps = getattr(getattr(torch, "backends", None), "mps", None)
        out["torch.mps"] = bool(mps is not None and mps.is_available())
    except Exception as exc:
        out["torch"] = f"error: {type(exc).__name__}: {exc}"
    try:
        from tilelang.backend.target import determine_target

        out['target="auto"'] = determine_target("auto")
    except Exception as exc:
        out['target="auto"'] = f"error: {type(exc).__name__}: {exc}"
    return out


def _backends() -> list[dict[str, Any]] | str:
    try:
        import warnings

        from tilelang.cli import _backend_report

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a failing backend is part of the report
            return _backend_report()
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"


def bug_report() -> dict[str, Any]:
    """Everything `format_report` prints, as plain data."""
    from tilelang.cli import version_report
    from tilelang.env import env

    return {
        "python": f"{platform.python_version()} ({platform.python_implementation()}) {sys.executable}",
        "platform": f"{platform.platform()} ({platform.machine()})",
        "packages": {name: _version(name) for name in _PACKAGES},
        "tilelang distributions": version_report(),
        "drivers": _drivers(),
        "devices": _devices(),
        "backends": _backends(),
        "settings": env.describe(),
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as text: sections of ``name  value`` lines."""
    lines = ["TileLang environment report (paste it into the bug report)", "", "== versions",
             f"python       {report['python']}", f"platform     {report['platform']}"]
    for name, version in report["packages"].items():
        if version is not None or name in ("torch", "apache-tvm", "numpy"):
            lines.append(f"{name:<18} {version or 'not installed'}")
    for rec in report["tilelang distributions"][1:]:
        kinds = ", ".join(rec.get("target_kinds", []))
        lines.append(f"{rec['distribution']:<18} {rec['version']}  (target kinds: {kinds})"
                     + ("  [blocked]" if rec.get("blocked") else ""))
    lines += [f"driver {name:<11} {text}" for name, text in report["drivers"].items()]
    lines += ["", "== devices"] + [f"{name:<18} {value}" for name, value in report["devices"].items()]
    lines += ["", "== backends and toolchains"]
    backends = report["backends"]
    if isinstance(backends, str):
        lines.append(backends)
    else:
        for rec in backends:
            lines.append(f"{rec['backend']} ({rec['distribution']}): {rec['status']}")
            lines += [f"  execution backend {eb['name']}: {'available' if eb['available'] else eb['detail']}"
                      for eb in rec["execution_backends"]]
            if rec.get("shares_execution_backends_with"):
                lines.append(f"  execution backends: those of {', '.join(rec['shares_execution_backends_with'])}")
            lines += [f"  toolchain {t['name']}: {'ok' if t['ok'] else 'MISSING'} {t['detail']}"
                      for t in rec["toolchain"]]
    lines += ["", "== settings (value [source]; set ones first)"]
    settings = sorted(report["settings"], key=lambda r: r["source"] == "default")
    for row in settings:
        value = "(unset)" if row["value"] is None else repr(row["value"]) if row["value"] == "" else row["value"]
        lines.append(f"{row['name']:<36} {value}  [{row['source']}]")
    return "\n".join(lines)
