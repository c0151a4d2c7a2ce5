"""`GemmBase`: the operand view every GEMM implementation class starts from (reference
``tilelang.tileop.gemm.gemm_base``).

It reads a ``tl.gemm`` call ``(A, B, C, trans_A, trans_B, policy, clear_accum)``: operands, shapes (M, N, K),
dtypes, the memory-scope variant (SS, SR, RS, TS, RR) and the policy. Subclasses registered with
`tilelang.tileop.gemm.registry.register_gemm_impl` implement `lower` (and `infer_layout` where they choose
fragment layouts).
"""

from __future__ import annotations

from typing import Any, ClassVar

from tilelang.tileop.gemm_operands import GemmOperands
from tilelang.utils.language import is_shared, is_tensor_memory

__all__ = ["GemmBase"]


class GemmBase(GemmOperands):
    """A ``tl.gemm`` call site: ``C (+)= op(A) @ op(B)``."""

    op_name = "tl.gemm"
    ARGS: ClassVar[dict[str, int]] = {"A": 0, "B": 1, "C": 2, "trans_A": 3, "trans_B": 4, "policy": 5,
                                      "clear_accum": 6}

    def __init__(self, gemm_node: Any) -> None:
        super().__init__(gemm_node)
        if self.a_dtype != self.b_dtype:
            raise ValueError(f"{type(self).__name__}: A is {self.a_dtype} but B is {self.b_dtype}; "
                             "both GEMM operands must have the same dtype")

    def is_gemm_ts(self) -> bool:
        return is_tensor_memory(self.A) and is_shared(self.B)

    @property
    def is_tcgen05(self) -> bool:
        return False

    @property
    def K(self) -> Any:
        return self._matrix_extents(self.ARGS["A"], self.trans_A)[1]

    @property
    def chunk(self) -> Any:
        return self.K

    @property
    def A_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.ARegion)

    @property
    def B_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.BRegion)

    @property
    def C_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.CRegion)
