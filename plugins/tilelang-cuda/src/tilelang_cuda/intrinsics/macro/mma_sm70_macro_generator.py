"""`TensorCoreIntrinEmitter` for Volta (sm_70): ``mma.sync.m8n8k4`` quad-pairs over 16 x 16 x 4 tiles.

The tilelang-cuda backend targets sm_80 and newer; this emitter describes the sm_70 tiling (sizes, fragment
maps) and refuses to emit code, naming the backend's lowest architecture.
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter as _Base

__all__ = ["TensorCoreIntrinEmitter"]


class TensorCoreIntrinEmitter(_Base):
    """Volta's 16 x 16 x 4 MMA tiling (``m8n8k4`` quad-pairs, fp16 operands)."""

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        self.k_dim = 4

    def _initialize_m_dim(self, a_dtype: str = "float16") -> None:
        self.M_DIM = 16

    def _initialize_local_size(self, m_dim: int = 16, n_dim: int = 16, k_dim: int = 4, warp_size: int = 32) -> None:
        self.local_size_a = 4
        self.local_size_b = 4
        self.local_size_out = 8

    def _initialize_mma_prefix(self, k_dim: int = 4) -> None:
        self.mma_prefix = "m16n16k4"

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 4) -> None:
        self.n_dim = self.micro_size_y = 16
        self.micro_size_x, self.micro_size_k = 16, 4
        self.warp_rows = self.warp_row_tiles // 16
        self.warp_cols = self.warp_col_tiles // 16

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("sm_70 mma.sync.m8n8k4 code is not emitted by the tilelang-cuda backend, which "
                                  "targets sm_80 and newer; use TensorCoreIntrinEmitter (m16n8k16) on sm_80+")

    ldmatrix_a = ldmatrix_b = mma = stmatrix = _refuse
