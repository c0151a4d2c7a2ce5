"""This machine's CPU as a carver device: blocks run one per core, tiles are sized to the per-core L2."""

from __future__ import annotations

from typing import Any

from tilelang.carver.arch._host import host_cpu
from tilelang.carver.arch._target import resolve_target
from tilelang.carver.arch.arch_base import TileDevice

__all__ = ["is_cpu_arch", "CPU"]


def is_cpu_arch(arch: TileDevice) -> bool:
    return isinstance(arch, CPU)


class CPU(TileDevice):
    """The host CPU, probed once (cores this process may use, vector width, cache sizes).

    How the roller's GPU notions map onto it:
      compute_max_core  usable cores (a kernel's blocks are spread over them)
      warp_size         fp32 lanes of one vector register (16 with AVX-512, 8 with AVX2, 4 with NEON)
      sm_partition      1: a core runs one block at a time
      smem_cap          half the per-core L2: the operand tiles a block packs ("shared" buffers) stay in L2
      reg_cap           an eighth of the per-core L2, in 32-bit words: the accumulator tile a block owns
      transaction_size  one cache line for reads and writes
      l2_cache_size_bytes  the shared last-level cache
    """

    def __init__(self, target: Any = "llvm"):
        super().__init__()
        self.target = resolve_target(target)
        host = host_cpu()
        self.host = host
        self.platform = "CPU"
        self.source = "host"
        self.name = host.name
        self.compute_capability = host.isa
        self.compute_max_core = host.cores
        self.warp_size = host.fp32_lanes
        self.sm_partition = 1
        self.smem_cap = host.l2_bytes // 2
        self.max_smem_usage = self.smem_cap
        self.reg_cap = host.l2_bytes // 4 // 8
        self.transaction_size = [64, 64]
        # relative weights: DRAM writes against L1/L2 reads of a core
        self.bandwidth = [20000, 160000]
        self.l2_cache_size_bytes = host.l3_bytes
        try:
            import tvm

            self.device: Any = tvm.runtime.device("cpu", 0)
        except Exception:
            self.device = None

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        """No matrix instructions are modelled on the CPU: GEMMs use the vector micro-kernel."""
        return []

    def __repr__(self) -> str:
        return f"CPU({self.target})"
