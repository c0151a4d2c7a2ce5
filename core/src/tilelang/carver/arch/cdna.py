"""AMD CDNA (Instinct) GPUs: the `CDNA` device model."""

from __future__ import annotations

from typing import Any

from tilelang.carver.arch._amd_device import fill_amd
from tilelang.carver.arch._target import resolve_target, target_attr, target_get_mcpu
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.arch.cuda import TensorInstruction

__all__ = ["is_cdna_arch", "CDNA"]

# gfx950 (MI350/MI355) has 160 KiB of LDS per CU; older drivers report gfx942's 64 KiB
_GFX950_LDS = 160 * 1024


def is_cdna_arch(arch: TileDevice) -> bool:
    return isinstance(arch, CDNA)


class CDNA(TileDevice):
    """An AMD Instinct GPU: from the live ROCm device when torch sees one, else from the known-device table
    (gfx942 -> MI300X, gfx90a -> MI250X, gfx950 -> MI355X, gfx908 -> MI100; `device` names another part)."""

    def __init__(self, target: Any = "hip", device: str | None = None):
        super().__init__()
        self.target = resolve_target(target)
        self.mcpu = target_get_mcpu(self.target)
        self.platform = "CDNA"
        fill_amd(self, "CDNA", self.mcpu, device)
        if self.mcpu == "gfx950" and self.smem_cap < _GFX950_LDS:
            self.smem_cap = _GFX950_LDS
        self.reg_cap = 32768
        self.max_smem_usage = 2 * self.smem_cap
        self.sm_partition = 4
        target_l2 = target_attr(self.target, "l2_cache_size_bytes")
        if target_l2 is not None:
            self.l2_cache_size_bytes = int(target_l2)
        self.transaction_size = [32, 128]
        self.bandwidth = [1300, 14000]
        self.available_tensor_instructions: list[TensorInstruction] | None = None

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        """MFMA tiles (16x16 for the fp16/bf16/int8 forms the compiler uses)."""
        self.available_tensor_instructions = [TensorInstruction("mfma", [16, 16])]
        return [t.shape for t in self.available_tensor_instructions]

    def __repr__(self) -> str:
        return f"CDNA({self.target})"
