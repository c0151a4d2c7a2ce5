"""`TensorCoreIntrinEmitterSM75`: the Turing (sm_75) shapes of ``mma.sync``: ``m16n8k8`` for 16-bit operands,
``m8n8k16`` for 8-bit and ``m8n8k32`` for 4-bit integers (the m16n8k16 / m16n8k32 atoms arrive with sm_80)."""

from __future__ import annotations

from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter, _bits

__all__ = ["TensorCoreIntrinEmitterSM75"]


class TensorCoreIntrinEmitterSM75(TensorCoreIntrinEmitter):
    """`TensorCoreIntrinEmitter` with the sm_75 MMA shapes (n tiles of 8)."""

    _SM75_K = {4: 32, 8: 16, 16: 8}
    _SM75_PREFIX = {8: "m16n8k8", 16: "m8n8k16", 32: "m8n8k32"}

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        bits = _bits(a_dtype)
        self.k_dim = min(self._SM75_K.get(bits, 256 // bits), self.chunk)

    def _initialize_m_dim(self, a_dtype: str = "float16") -> None:
        super()._initialize_m_dim(a_dtype)
        if _bits(a_dtype) in (4, 8):
            self.M_DIM = 8

    def _initialize_mma_prefix(self, k_dim: int = 16) -> None:
        if k_dim in self._SM75_PREFIX:
            self.mma_prefix = self._SM75_PREFIX[k_dim]
        else:
            super()._initialize_mma_prefix(k_dim)

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 16) -> None:
        if k_dim not in (8, 16, 32):
            super()._initialize_micro_size(m_dim, k_dim)
            return
        if k_dim in (16, 32) and m_dim != 8:
            raise ValueError(f"For SM75 integer MMA, m_dim must be 8, got {m_dim}")
        self.n_dim = self.micro_size_y = 8
        self.warp_rows = self.warp_row_tiles // m_dim
        self.warp_cols = self.warp_col_tiles // 8
        self.micro_size_x = m_dim
        self.micro_size_k = k_dim
