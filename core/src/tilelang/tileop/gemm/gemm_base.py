"""`GemmBase`: the operand view every GEMM implementation class starts from (reference
``tilelang.tileop.gemm.gemm_base``).

It reads a ``tl.gemm`` call ``(A, B, C, trans_A, trans_B, policy, clear_accum)``: operands, shapes (M, N, K),
dtypes, the memory-scope variant (SS, SR, RS, TS, RR) and the policy. Subclasses registered with
`tilelang.tileop.gemm.registry.register_gemm_impl` implement `lower` (and `infer_layout` where they choose
fragment layouts).
"""

from __future__ import annotations

from typing import Any

from tilelang.tileop.base import GemmWarpPolicy, TileOpBase
from tilelang.utils.language import is_fragment, is_shared, is_tensor_memory

__all__ = ["GemmBase"]


class GemmBase(TileOpBase):
    """A ``tl.gemm`` call site: ``C (+)= op(A) @ op(B)``."""

    op_name = "tl.gemm"

    def __init__(self, gemm_node: Any) -> None:
        super().__init__(gemm_node)
        if self.a_dtype != self.b_dtype:
            raise ValueError(f"{type(self).__name__}: A is {self.a_dtype} but B is {self.b_dtype}; "
                             "both GEMM operands must have the same dtype")

    # ------------------------------------------------------------------ variants
    def is_gemm_ss(self) -> bool:
        return is_shared(self.A) and is_shared(self.B)

    def is_gemm_sr(self) -> bool:
        return is_shared(self.A) and is_fragment(self.B)

    def is_gemm_rs(self) -> bool:
        return is_fragment(self.A) and is_shared(self.B)

    def is_gemm_ts(self) -> bool:
        return is_tensor_memory(self.A) and is_shared(self.B)

    def is_gemm_rr(self) -> bool:
        return is_fragment(self.A) and is_fragment(self.B)

    # ------------------------------------------------------------------ operands
    @property
    def ARegion(self) -> Any:
        return self._region(0)

    @property
    def BRegion(self) -> Any:
        return self._region(1)

    @property
    def CRegion(self) -> Any:
        return self._region(2)

    @property
    def A(self) -> Any:
        return self._buffer(0)

    @property
    def B(self) -> Any:
        return self._buffer(1)

    @property
    def C(self) -> Any:
        return self._buffer(2)

    @property
    def trans_A(self) -> bool:
        return bool(self.gemm_node.int_arg(3))

    @property
    def trans_B(self) -> bool:
        return bool(self.gemm_node.int_arg(4))

    @property
    def policy(self) -> GemmWarpPolicy:
        return self._policy(5)

    @property
    def clear_accum(self) -> bool:
        return bool(self.gemm_node.int_arg(6))

    @property
    def k_pack(self) -> int:
        return 1

    @property
    def wg_wait(self) -> int:
        return 0

    @property
    def is_tcgen05(self) -> bool:
        return False

    # ------------------------------------------------------------------ shapes and dtypes
    @property
    def M(self) -> Any:
        return self.CRegion.region[-2].extent

    @property
    def N(self) -> Any:
        return self.CRegion.region[-1].extent

    @property
    def K(self) -> Any:
        return self._matrix_extents(0, self.trans_A)[1]

    @property
    def chunk(self) -> Any:
        return self.K

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

    @property
    def A_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.ARegion)

    @property
    def B_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.BRegion)

    @property
    def C_base_offsets(self) -> list[Any]:
        return self.get_region_base_offsets(self.CRegion)
