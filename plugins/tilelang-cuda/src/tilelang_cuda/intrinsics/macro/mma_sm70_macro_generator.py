"""`TensorCoreIntrinEmitter` for Volta (sm_70): ``mma.sync.m8n8k4`` quad-pairs over 16 x 16 x 4 tiles.

tilelang-cuda emits no m8n8k4 code: this emitter describes the sm_70 tiling (sizes, fragment maps) and its
emitting methods raise a LoweringError naming the construct, the target arch and the lowest arch whose mma.sync
shapes this backend emits (`volta_refusal`).
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter as _Base

__all__ = ["TensorCoreIntrinEmitter", "volta_refusal"]


def volta_refusal(construct: str, arch: str = "sm_70") -> str:
    """The message for a Volta tensor-core construct: what sm_70 lacks here and the lowest archs that have it."""
    return (f"{construct} on target arch {arch}: tilelang-cuda emits no Volta mma.sync.m8n8k4; the lowest "
            "architectures with the mma.sync shapes it emits are sm_75 (m16n8k8) and sm_80 (m16n8k16, the "
            "tensor-core T.gemm). On sm_70 use T.gemm, which runs on CUDA cores there, or compile for sm_80+")


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
        from tilelang.errors import LoweringError

        raise LoweringError(volta_refusal("the sm_70 TensorCoreIntrinEmitter (ldmatrix / mma / stmatrix)"))

    ldmatrix_a = ldmatrix_b = mma = stmatrix = _refuse
