"""Apple GPUs: the `METAL` device model."""

from __future__ import annotations

import platform
import subprocess
from typing import Any

from tilelang.carver.arch._devices import default_device, lookup_device
from tilelang.carver.arch._target import resolve_target
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.arch.cuda import TensorInstruction

__all__ = ["is_metal_arch", "METAL"]


def is_metal_arch(arch: TileDevice) -> bool:
    return isinstance(arch, METAL)


def _this_mac_chip() -> str | None:
    """"Apple M2 Pro" on an Apple-silicon Mac, else None."""
    if platform.system() != "Darwin":
        return None
    try:
        out = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                             timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out if out.startswith("Apple") else None


class METAL(TileDevice):
    """An Apple-silicon GPU: the chip of this Mac when there is one, else `device` ("M2 Max") or an M1.

    Figures come from the known-device table (GPU cores, 32 KiB threadgroup memory, SIMD groups of 32).
    """

    def __init__(self, target: Any = "metal", device: str | None = None):
        super().__init__()
        self.target = resolve_target(target)
        self.platform = "METAL"
        chip = device or _this_mac_chip()
        spec = None
        if chip is not None:
            try:
                spec = lookup_device(chip, "METAL")
            except ValueError:
                if device is not None:
                    raise
        self.source = "device" if device is None and spec is not None else "table"
        spec = spec or default_device("METAL", None)
        self.spec = spec
        self.name = spec.name
        self.smem_cap = spec.smem_per_block
        self.max_smem_usage = spec.smem_per_cu
        self.compute_max_core = spec.compute_units
        self.warp_size = spec.warp_size
        self.compute_capability = spec.arch
        self.l2_cache_size_bytes = spec.l2_bytes
        self.reg_cap = spec.regs_per_block
        self.sm_partition = 4
        self.transaction_size = [32, 128]
        self.bandwidth = [750, 12080]
        self.available_tensor_instructions: list[TensorInstruction] | None = None

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        """simdgroup_matrix tiles are 8x8."""
        self.available_tensor_instructions = [TensorInstruction("simdgroup_matrix", [8, 8])]
        return [t.shape for t in self.available_tensor_instructions]

    def __repr__(self) -> str:
        return f"METAL({self.target})"
