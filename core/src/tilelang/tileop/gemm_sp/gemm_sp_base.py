"""`GemmSPBase`: the operand view every GEMM_SP (2:4-sparse A) implementation class starts from (reference
``tilelang.tileop.gemm_sp.gemm_sp_base``).

It reads a ``tl.gemm_sp`` call ``(A_sparse, E, B, C, trans_A, trans_E, trans_B, policy, clear_accum)``; A holds
K/2 columns (its nonzeros) and E the metadata saying where they sit. Subclasses registered with
`tilelang.tileop.gemm_sp.registry.register_gemm_sp_impl` implement `lower`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tilelang.tileop.gemm_operands import GemmOperands

__all__ = ["GemmSPBase"]


class GemmSPBase(GemmOperands):
    """A ``tl.gemm_sp`` call site: ``C (+)= op(A) @ op(B)`` with A 2:4-sparse."""

    op_name = "tl.gemm_sp"
    ARGS: ClassVar[dict[str, int]] = {"A": 0, "E": 1, "B": 2, "C": 3, "trans_A": 4, "trans_E": 5, "trans_B": 6,
                                      "policy": 7, "clear_accum": 8}

    @property
    def ERegion(self) -> Any:
        return self._region(self.ARGS["E"])

    @property
    def E(self) -> Any:
        return self._buffer(self.ARGS["E"])

    @property
    def trans_E(self) -> bool:
        return bool(self.gemm_node.int_arg(self.ARGS["trans_E"]))

    @property
    def K(self) -> Any:
        """The dense reduction length (B's K; A stores half of it)."""
        return self._matrix_extents(self.ARGS["B"], self.trans_B)[0]

    @property
    def e_dtype(self) -> str:
        return self._dtype(self.E)
