"""A table of known accelerators, so the carver can model a device that is not plugged into this machine.

Each `DeviceSpec` holds published figures (SM/CU counts, shared memory, L2, memory bandwidth). The arch
classes read them when no live device answers: ``CUDA({"kind": "cuda", "arch": "sm_90"})`` on a CPU-only
machine models an H100, ``CUDA(target, device="H200")`` the named part. `lookup_device` accepts the usual
spellings ("H100", "nvidia h100 sxm", "MI300X", "gfx1151", "Apple M2 Max").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["DeviceSpec", "KNOWN_DEVICES", "lookup_device", "default_device", "known_device_names"]

KiB = 1024
MiB = 1024 * 1024


@dataclass(frozen=True)
class DeviceSpec:
    """Published figures of one accelerator model."""

    name: str
    platform: str  # "CUDA", "CDNA", "RDNA" or "METAL"
    arch: str  # "sm_90", "gfx942", "apple8", ...
    compute_units: int  # SMs (NVIDIA), CUs (AMD), GPU cores (Apple)
    warp_size: int
    smem_per_block: int  # bytes a block may use without opting in (static shared / LDS / threadgroup memory)
    smem_per_block_optin: int  # bytes a block may use at most (dynamic shared memory opt-in)
    smem_per_cu: int  # bytes of shared memory per SM / CU
    l2_bytes: int
    bandwidth_gbs: float  # DRAM bandwidth, GB/s
    regs_per_block: int = 65536  # 32-bit registers one block may hold
    max_threads_per_block: int = 1024
    aliases: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.platform not in ("CUDA", "CDNA", "RDNA", "METAL"):
            raise ValueError(f"DeviceSpec {self.name!r}: unknown platform {self.platform!r}")
        if min(self.compute_units, self.warp_size, self.smem_per_block, self.l2_bytes) <= 0:
            raise ValueError(f"DeviceSpec {self.name!r}: counts and sizes must be positive")


def _nv(name: str, arch: str, sms: int, optin_kib: int, per_sm_kib: int, l2_mib: float, bw: float,
        *aliases: str) -> DeviceSpec:
    return DeviceSpec(name, "CUDA", arch, sms, 32, 48 * KiB, optin_kib * KiB, per_sm_kib * KiB, int(l2_mib * MiB),
                      bw, aliases=aliases)


def _amd(name: str, platform: str, arch: str, cus: int, lds_kib: int, l2_mib: float, bw: float,
         *aliases: str) -> DeviceSpec:
    warp = 64 if platform == "CDNA" else 32
    return DeviceSpec(name, platform, arch, cus, warp, lds_kib * KiB, lds_kib * KiB, lds_kib * KiB,
                      int(l2_mib * MiB), bw, regs_per_block=32768, aliases=aliases)


def _apple(name: str, family: str, cores: int, slc_mib: int, bw: float, *aliases: str) -> DeviceSpec:
    return DeviceSpec(name, "METAL", family, cores, 32, 32 * KiB, 32 * KiB, 32 * KiB, slc_mib * MiB, bw,
                      aliases=aliases)


KNOWN_DEVICES: tuple[DeviceSpec, ...] = (
    # NVIDIA: name, arch, SMs, max smem per block (opt-in, KiB), smem per SM (KiB), L2 (MiB), GB/s
    _nv("Tesla V100-SXM2", "sm_70", 80, 96, 96, 6, 900, "v100"),
    _nv("Tesla T4", "sm_75", 40, 64, 64, 4, 320, "t4"),
    _nv("A100-SXM4-80GB", "sm_80", 108, 163, 164, 40, 2039, "a100", "a100 sxm", "a100 80gb"),
    _nv("A10", "sm_86", 72, 99, 100, 6, 600, "a10"),
    _nv("GeForce RTX 3090", "sm_86", 82, 99, 100, 6, 936, "rtx 3090", "3090"),
    _nv("GeForce RTX 4090", "sm_89", 128, 99, 100, 72, 1008, "rtx 4090", "4090"),
    _nv("L40S", "sm_89", 142, 99, 100, 96, 864, "l40s"),
    _nv("H100 SXM5", "sm_90", 132, 227, 228, 50, 3350, "h100", "h100 sxm", "h100 80gb hbm3"),
    _nv("H100 PCIe", "sm_90", 114, 227, 228, 50, 2000, "h100 pcie"),
    _nv("H200", "sm_90", 132, 227, 228, 50, 4800, "h200", "h200 sxm", "h200 nvl"),
    _nv("B200", "sm_100", 148, 227, 228, 126, 8000, "b200"),
    _nv("GeForce RTX 5090", "sm_120", 170, 99, 100, 96, 1792, "rtx 5090", "5090"),
    # AMD CDNA (one GCD/partition as HIP reports it): name, arch, CUs, LDS (KiB), L2 (MiB), GB/s
    _amd("Instinct MI100", "CDNA", "gfx908", 120, 64, 8, 1228, "mi100"),
    _amd("Instinct MI210", "CDNA", "gfx90a", 104, 64, 8, 1638, "mi210"),
    _amd("Instinct MI250", "CDNA", "gfx90a", 104, 64, 8, 1638, "mi250"),
    _amd("Instinct MI250X", "CDNA", "gfx90a", 110, 64, 8, 1638, "mi250x"),
    _amd("Instinct MI300X", "CDNA", "gfx942", 304, 64, 4, 5300, "mi300x", "mi300"),
    _amd("Instinct MI300A", "CDNA", "gfx942", 228, 64, 4, 5300, "mi300a"),
    _amd("Instinct MI325X", "CDNA", "gfx942", 304, 64, 4, 6000, "mi325x"),
    _amd("Instinct MI355X", "CDNA", "gfx950", 256, 160, 4, 8000, "mi355x", "mi350x"),
    # AMD RDNA 3 / 3.5 / 4
    _amd("Radeon RX 7900 XTX", "RDNA", "gfx1100", 96, 64, 6, 960, "rx 7900 xtx", "7900 xtx", "gfx1100"),
    _amd("Radeon RX 7800 XT", "RDNA", "gfx1101", 60, 64, 4, 624, "rx 7800 xt", "gfx1101"),
    _amd("Radeon RX 7600", "RDNA", "gfx1102", 32, 64, 2, 288, "rx 7600", "gfx1102"),
    _amd("Radeon 890M", "RDNA", "gfx1150", 16, 64, 2, 120, "890m", "gfx1150"),
    _amd("Radeon 8060S", "RDNA", "gfx1151", 40, 64, 2, 256, "8060s", "strix halo", "gfx1151"),
    _amd("Radeon RX 9060 XT", "RDNA", "gfx1200", 32, 64, 4, 320, "rx 9060 xt", "gfx1200"),
    _amd("Radeon RX 9070 XT", "RDNA", "gfx1201", 64, 64, 8, 640, "rx 9070 xt", "gfx1201"),
    # Apple silicon (Metal): name, GPU family, GPU cores, system-level cache (MiB), GB/s
    _apple("Apple M1", "apple7", 8, 8, 68, "m1"),
    _apple("Apple M1 Pro", "apple7", 16, 24, 200, "m1 pro"),
    _apple("Apple M1 Max", "apple7", 32, 48, 400, "m1 max"),
    _apple("Apple M1 Ultra", "apple7", 64, 96, 800, "m1 ultra"),
    _apple("Apple M2", "apple8", 10, 8, 100, "m2"),
    _apple("Apple M2 Pro", "apple8", 19, 24, 200, "m2 pro"),
    _apple("Apple M2 Max", "apple8", 38, 48, 400, "m2 max"),
    _apple("Apple M2 Ultra", "apple8", 76, 96, 800, "m2 ultra"),
    _apple("Apple M3", "apple9", 10, 8, 100, "m3"),
    _apple("Apple M3 Pro", "apple9", 18, 12, 150, "m3 pro"),
    _apple("Apple M3 Max", "apple9", 40, 48, 400, "m3 max"),
    _apple("Apple M4", "apple9", 10, 8, 120, "m4"),
    _apple("Apple M4 Pro", "apple9", 20, 24, 273, "m4 pro"),
    _apple("Apple M4 Max", "apple9", 40, 48, 546, "m4 max"),
)

# the part a bare arch stands for when no device is named
_DEFAULT_FOR_ARCH = {
    "sm_70": "Tesla V100-SXM2", "sm_75": "Tesla T4", "sm_80": "A100-SXM4-80GB", "sm_86": "GeForce RTX 3090",
    "sm_89": "GeForce RTX 4090", "sm_90": "H100 SXM5", "sm_100": "B200", "sm_120": "GeForce RTX 5090",
    "gfx908": "Instinct MI100", "gfx90a": "Instinct MI250X", "gfx942": "Instinct MI300X", "gfx950": "Instinct MI355X",
    "gfx1100": "Radeon RX 7900 XTX", "gfx1101": "Radeon RX 7800 XT", "gfx1102": "Radeon RX 7600",
    "gfx1150": "Radeon 890M", "gfx1151": "Radeon 8060S", "gfx1200": "Radeon RX 9060 XT",
    "gfx1201": "Radeon RX 9070 XT",
    "apple7": "Apple M1", "apple8": "Apple M2", "apple9": "Apple M3",
}
_DEFAULT_FOR_PLATFORM = {"CUDA": "A100-SXM4-80GB", "CDNA": "Instinct MI300X", "RDNA": "Radeon RX 7900 XTX",
                         "METAL": "Apple M1"}

_BY_NAME = {spec.name: spec for spec in KNOWN_DEVICES}


def _key(text: str) -> str:
    text = text.lower()
    text = re.sub(r"\b(nvidia|amd|geforce|tesla|radeon|instinct|apple|graphics)\b", " ", text)
    return re.sub(r"[^a-z0-9]+", "", text)


_BY_KEY: dict[str, DeviceSpec] = {}
for _spec in KNOWN_DEVICES:
    for _alias in (_spec.name, *_spec.aliases):
        _BY_KEY.setdefault(_key(_alias), _spec)


def known_device_names(platform: str | None = None) -> list[str]:
    """Names of the devices in the table (of one platform when given)."""
    return [s.name for s in KNOWN_DEVICES if platform is None or s.platform == platform]


def lookup_device(name: str, platform: str | None = None) -> DeviceSpec:
    """The table entry for a device name or alias; ValueError listing the known names when there is none.

    A live device's reported name ("NVIDIA H100 80GB HBM3") also matches: when no alias is equal, the longest
    alias contained in the name wins.
    """
    key = _key(name)
    spec = _BY_KEY.get(key)
    if spec is None and key:
        contained = [(len(k), s) for k, s in _BY_KEY.items() if len(k) >= 4 and k in key]
        if contained:
            spec = max(contained, key=lambda item: item[0])[1]
    if spec is None or (platform is not None and spec.platform != platform):
        known = ", ".join(known_device_names(platform))
        where = f" {platform}" if platform else ""
        raise ValueError(f"unknown{where} device {name!r}; the carver's device table knows: {known}")
    return spec


def default_device(platform: str, arch: str | None) -> DeviceSpec:
    """The table entry that models `arch` on `platform` (the nearest older part of the same line if needed)."""
    if arch in _DEFAULT_FOR_ARCH:
        spec = _BY_NAME[_DEFAULT_FOR_ARCH[arch]]
        if spec.platform == platform:
            return spec
    if platform == "CUDA" and arch:
        version = _sm_number(arch)
        older = [(_sm_number(a), n) for a, n in _DEFAULT_FOR_ARCH.items() if a.startswith("sm_")]
        older = [(v, n) for v, n in older if 0 < v <= version]
        if older:
            return _BY_NAME[max(older)[1]]
    return _BY_NAME[_DEFAULT_FOR_PLATFORM[platform]]


def _sm_number(arch: str) -> int:
    match = re.fullmatch(r"sm_(\d+)[a-z]*", arch)
    return int(match.group(1)) if match else -1
