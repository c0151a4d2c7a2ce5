"""`GemmSPBase`: the operand view every GEMM_SP (2:4-sparse A) implementation class starts from (reference
``tilelang.tileop.gemm_sp.gemm_sp_base``).

It reads a ``tl.gemm_sp`` call ``(A_sparse, E, B, C, trans_A, trans_E, trans_B, policy, clear_accum)``; A holds
K/2 columns (its nonzeros) and E the metadata saying where they sit. Subclasses registered with
`tilelang.tileop.gemm_sp.registry.register_gemm_sp_impl` implement `lower`.
"""

from __future__ import annotations

from typing import Any

from tilelang.tileop.base import GemmWarpPolicy, TileOpBase
from tilelang.utils.language import is_fragment, is_shared

__all__ = ["GemmSPBase"]


class GemmSPBase(TileOpBase):
    """A ``tl.gemm_sp`` call site: ``C (+)= op(A) @ op(B)`` with A 2:4-sparse."""

    op_name = "tl.gemm_sp"

    def is_gemm_ss(self) -> bool:
        return is_shared(self.A) and is_shared(self.B)

    def is_gemm_sr(self) -> bool:
        return is_shared(self.A) and is_fragment(self.B)

    def is_gemm_rs(self) -> bool:
        return is_fragment(self.A) and is_shared(self.B)

    def is_gemm_rr(self) -> bool:
        return is_fragment(self.A) and is_fragment(self.B)

    @property
    def ARegion(self) -> Any:
        return self._region(0)

    @property
    def ERegion(self) -> Any:
        return self._region(1)

    @property
    def BRegion(self) -> Any:
        return self._region(2)

    @property
    def CRegion(self) -> Any:
        return self._region(3)

    @property
    def A(self) -> Any:
        return self._buffer(0)

    @property
    def E(self) -> Any:
        return self._buffer(1)

    @property
    def B(self) -> Any:
        return self._buffer(2)

    @property
    def C(self) -> Any:
        return self._buffer(3)

    @property
    def trans_A(self) -> bool:
        return bool(self.gemm_node.int_arg(4))

    @property
    def trans_E(self) -> bool:
        return bool(self.gemm_node.int_arg(5))

    @property
    def trans_B(self) -> bool:
        return bool(self.gemm_node.int_arg(6))

    @property
    def policy(self) -> GemmWarpPolicy:
        return self._policy(7)

    @property
    def clear_accum(self) -> bool:
        return bool(self.gemm_node.int_arg(8))

    @property
    def k_pack(self) -> int:
        return 1

    @property
    def wg_wait(self) -> int:
        return 0

    @property
    def M(self) -> Any:
        return self.CRegion.region[-2].extent

    @property
    def N(self) -> Any:
        return self.CRegion.region[-1].extent

    @property
    def K(self) -> Any:
        """The dense reduction length (B's K; A stores half of it)."""
        return self._matrix_extents(2, self.trans_B)[0]

    @property
    def e_dtype(self) -> str:
        return self._dtype(self.E)

    @property
    def a_dtype(self) -> str:
        return self._dtype(self.A)

    @property
    def b_dtype(self) -> str:
        return self._dtype(self.B)

    @property
    def accum_dtype(self) -> str:
        return self._dtype(self.C)

    @property
    def stride_A(self) -> Any:
        return self._row_stride(self.A)

    @property
    def stride_B(self) -> Any:
        return self._row_stride(self.B)

    @property
    def offset_A(self) -> Any:
        return self._flat_offset(self.ARegion)

    @property
    def offset_B(self) -> Any:
        return self._flat_offset(self.BRegion)
