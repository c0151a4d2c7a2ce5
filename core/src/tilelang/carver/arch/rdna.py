"""AMD RDNA 3/4 GPUs (gfx11, gfx12): the `RDNA` device model and its roller tuning table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.carver.arch._amd_device import fill_amd
from tilelang.carver.arch._target import (
    normalize_mcpu,
    resolve_target,
    target_attr,
    target_get_mcpu,
    target_get_rdna_generation,
)
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.arch.cuda import TensorInstruction

__all__ = ["is_rdna_arch", "RDNA"]

_SUPPORTED_GENERATIONS = (11, 12)
_WMMA_BY_GENERATION: dict[int, tuple[TensorInstruction, ...]] = {
    11: (TensorInstruction("wmma", [16, 16]),),
    12: (TensorInstruction("wmma", [16, 16]),),
}


@dataclass(frozen=True)
class _RDNATuningConfig:
    """Roller defaults for RDNA WMMA kernels (scheduling preferences, not correctness limits).

    preferred_warps_per_block     wave32 warps a block should have
    pipeline_stage                software-pipeline depth of the K loop
    reduction_step_by_dtype_bits  (input dtype bits, first K tile) pairs
    """

    preferred_warps_per_block: int = 4
    pipeline_stage: int = 1
    reduction_step_by_dtype_bits: tuple[tuple[int, int], ...] = ((16, 32),)

    def reduction_step_for_dtype_bits(self, bits: int) -> int | None:
        """The first K tile for inputs of `bits` bits, None when the table has no entry."""
        for dtype_bits, step in self.reduction_step_by_dtype_bits:
            if dtype_bits == bits:
                return step
        return None


_DEFAULT_TUNING = _RDNATuningConfig()
# per-mcpu measurements that differ from the default
_TUNING_BY_MCPU: dict[str, _RDNATuningConfig] = {
    # Strix Halo (Radeon 8060S): large fp16 GEMMs did best with 4 warps, K tiles from 32 and two stages
    "gfx1151": _RDNATuningConfig(preferred_warps_per_block=4, pipeline_stage=2,
                                 reduction_step_by_dtype_bits=((16, 32),)),
}


def _get_rdna_tuning_config(mcpu: str | None) -> _RDNATuningConfig:
    """The tuning entry of `mcpu` (feature suffixes such as ``:xnack-`` ignored), else the default."""
    name = normalize_mcpu(mcpu) if mcpu else None
    return _TUNING_BY_MCPU.get(name or "", _DEFAULT_TUNING)


def _wmma_for_generation(generation: int) -> tuple[TensorInstruction, ...]:
    if generation not in _WMMA_BY_GENERATION:
        raise ValueError(f"Unsupported RDNA generation for tensor instructions: {generation}")
    return _WMMA_BY_GENERATION[generation]


def is_rdna_arch(arch: TileDevice) -> bool:
    return isinstance(arch, RDNA)


class RDNA(TileDevice):
    """An RDNA 3/4 GPU with WMMA (gfx11xx, gfx12xx): from the live ROCm device when torch sees one, else from
    the known-device table (gfx1100 -> RX 7900 XTX, gfx1151 -> Radeon 8060S, gfx1200 -> RX 9060 XT, ...)."""

    def __init__(self, target: Any = "hip", device: str | None = None):
        super().__init__()
        self.target = resolve_target(target)
        self.mcpu = target_get_mcpu(self.target)
        self.rdna_generation = target_get_rdna_generation(self.target)
        self.tuning = _get_rdna_tuning_config(self.mcpu)
        if self.rdna_generation not in _SUPPORTED_GENERATIONS:
            raise ValueError("RDNA device model currently supports gfx11/gfx12 targets only, "
                             f"got {self.mcpu or self.target}.")
        self.platform = "RDNA"
        fill_amd(self, "RDNA", self.mcpu, device)
        self.warp_size = 32
        self.reg_cap = 32768
        self.max_smem_usage = 2 * self.smem_cap
        self.sm_partition = 4
        target_l2 = target_attr(self.target, "l2_cache_size_bytes")
        if target_l2 is not None:
            self.l2_cache_size_bytes = int(target_l2)
        self.transaction_size = [32, 128]
        self.bandwidth = [750, 12080]
        self.available_tensor_instructions: list[TensorInstruction] | None = None

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        self.available_tensor_instructions = list(_wmma_for_generation(self.rdna_generation))
        return [t.shape for t in self.available_tensor_instructions]

    def __repr__(self) -> str:
        return f"RDNA({self.target})"
