"""What this machine's CPU offers: cores, SIMD width, cache sizes (Linux sysfs, macOS sysctl, fallbacks)."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HostCPU", "host_cpu"]


@dataclass(frozen=True)
class HostCPU:
    """The CPU this process runs on."""

    name: str
    machine: str  # "x86_64", "aarch64", "arm64", ...
    cores: int  # cores this process may use
    isa: str  # widest vector ISA: "avx512", "avx2", "sse", "neon", "sve" or "scalar"
    vector_bytes: int  # width of one vector register
    l1d_bytes: int  # per core
    l2_bytes: int  # per core
    l3_bytes: int  # last-level cache, shared

    @property
    def fp32_lanes(self) -> int:
        return max(1, self.vector_bytes // 4)


def _size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(text[-1:], 1)
    digits = text.rstrip("KMGB")
    return int(float(digits) * scale) if digits else 0


def _linux_caches() -> dict[int, int]:
    """Per-level data cache size of cpu0, from sysfs."""
    found: dict[int, int] = {}
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind in ("Data", "Unified") and size:
            found[level] = size
    return found


def _sysctl(name: str) -> str:
    try:
        return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _cpuinfo() -> tuple[str, set[str]]:
    name, flags = "", set()
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return name, flags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and not name:
            name = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = set(value.split())
    return name, flags


def _isa(machine: str, flags: set[str]) -> tuple[str, int]:
    if machine in ("x86_64", "amd64", "AMD64", "i686"):
        if "avx512f" in flags:
            return "avx512", 64
        if "avx2" in flags:
            return "avx2", 32
        if "avx" in flags:
            return "avx", 32
        return "sse", 16
    if machine in ("aarch64", "arm64"):
        return ("sve", 16) if "sve" in flags else ("neon", 16)
    return "scalar", 8


@functools.lru_cache(maxsize=1)
def host_cpu() -> HostCPU:
    """Probe this machine's CPU once."""
    from tilelang.env import usable_cores

    machine = platform.machine() or "unknown"
    name, flags = _cpuinfo()
    caches = _linux_caches()
    if platform.system() == "Darwin":
        name = name or _sysctl("machdep.cpu.brand_string")
        for level, key in ((1, "hw.l1dcachesize"), (2, "hw.l2cachesize"), (3, "hw.l3cachesize")):
            value = _sysctl(key)
            if value.isdigit() and int(value):
                caches.setdefault(level, int(value))
        if machine == "arm64":
            flags.add("asimd")
    isa, vector_bytes = _isa(machine, flags)
    l1 = caches.get(1, 32 * 1024)
    l2 = caches.get(2, 512 * 1024)
    l3 = caches.get(3, l2 * max(1, os.cpu_count() or 1))
    return HostCPU(name=name or platform.processor() or machine, machine=machine, cores=usable_cores(), isa=isa,
                   vector_bytes=vector_bytes, l1d_bytes=l1, l2_bytes=l2, l3_bytes=l3)
