"""`TileDevice`: the hardware figures the roller policies plan with."""

from __future__ import annotations

from typing import Any


class TileDevice:
    """A device model: capacities the carver's tiling heuristics read.

    Attributes (all per block / per SM unless said otherwise):

    =================== ========================================================================================
    reg_cap             registers (32-bit words) a block may hold
    smem_cap            shared memory (bytes) a block may use
    max_smem_usage      shared memory (bytes) of one SM / CU, shared by its resident blocks
    compute_max_core    SMs / CUs / GPU cores / CPU cores
    warp_size           threads that execute in lockstep (SIMD lanes on a CPU)
    sm_partition        schedulers per SM: how many blocks the policy lets share one
    transaction_size    [write, read] memory transaction size in bytes
    bandwidth           [global, shared] relative bandwidth weights used to score tiles
    platform            "CUDA", "CDNA", "RDNA", "METAL", "CPU" or "unknown"
    compute_capability  "90" for sm_90, the gfx name on AMD, the ISA level on a CPU
    l2_cache_size_bytes last-level cache shared by all cores
    name                the modelled part ("H100 SXM5", "Instinct MI300X", this CPU's model name, ...)
    source              "device" when read from a live device, "table" from the known-device table,
                        "host" from probing this machine's CPU
    =================== ========================================================================================
    """

    def __init__(self) -> None:
        self.reg_cap: int = 0
        self.smem_cap: int = 0
        self.compute_max_core: int = 0
        self.warp_size: int = 0
        self.sm_partition: int = 0
        self.transaction_size: list[int] = [0, 0]
        self.max_smem_usage: int = 0
        self.bandwidth: list[int] = [0, 0]
        self.platform: str = "unknown"
        self.compute_capability: str = "unknown"
        self.l2_cache_size_bytes: int = 0
        self.name: str = "unknown"
        self.source: str = "unknown"

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        """[M, N] shapes of the matrix instructions this device offers (spelling kept from the reference)."""
        raise NotImplementedError(f"{type(self).__name__} does not describe matrix instructions")

    def summary(self) -> dict[str, Any]:
        """The figures as a plain dict (for logs and `tilelang` tooling)."""
        keys = ("platform", "name", "source", "compute_capability", "compute_max_core", "warp_size", "smem_cap",
                "max_smem_usage", "reg_cap", "sm_partition", "l2_cache_size_bytes", "transaction_size",
                "bandwidth")
        return {k: getattr(self, k, None) for k in keys}
