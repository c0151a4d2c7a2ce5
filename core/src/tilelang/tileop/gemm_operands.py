"""`GemmOperands`: what every GEMM-like call site has (A, B, C, transposes, policy, shapes, dtypes), read from
the argument positions its class names in `ARGS`. `GemmBase` (``tl.gemm``) and `GemmSPBase` (``tl.gemm_sp``,
which adds the sparsity metadata E) are this view over their own argument lists."""

from __future__ import annotations

from typing import Any, ClassVar

from tilelang.tileop.base import GemmWarpPolicy, TileOpBase
from tilelang.utils.language import is_fragment, is_shared

__all__ = ["GemmOperands"]


class GemmOperands(TileOpBase):
    """A GEMM-like call site: ``C (+)= op(A) @ op(B)``; `ARGS` maps ``A B C trans_A trans_B policy clear_accum``
    (and any extra operand) to their argument positions."""

    ARGS: ClassVar[dict[str, int]] = {}

    def _arg(self, name: str) -> int:
        return self.ARGS[name]

    # ------------------------------------------------------------------ variants
    def is_gemm_ss(self) -> bool:
        return is_shared(self.A) and is_shared(self.B)

    def is_gemm_sr(self) -> bool:
        return is_shared(self.A) and is_fragment(self.B)

    def is_gemm_rs(self) -> bool:
        return is_fragment(self.A) and is_shared(self.B)

    def is_gemm_rr(self) -> bool:
        return is_fragment(self.A) and is_fragment(self.B)

    # ------------------------------------------------------------------ operands
    @property
    def ARegion(self) -> Any:
        return self._region(self._arg("A"))

    @property
    def BRegion(self) -> Any:
        return self._region(self._arg("B"))

    @property
    def CRegion(self) -> Any:
        return self._region(self._arg("C"))

    @property
    def A(self) -> Any:
        return self._buffer(self._arg("A"))

    @property
    def B(self) -> Any:
        return self._buffer(self._arg("B"))

    @property
    def C(self) -> Any:
        return self._buffer(self._arg("C"))

    @property
    def trans_A(self) -> bool:
        return bool(self.gemm_node.int_arg(self._arg("trans_A")))

    @property
    def trans_B(self) -> bool:
        return bool(self.gemm_node.int_arg(self._arg("trans_B")))

    @property
    def policy(self) -> GemmWarpPolicy:
        return self._policy(self._arg("policy"))

    @property
    def clear_accum(self) -> bool:
        return bool(self.gemm_node.int_arg(self._arg("clear_accum")))

    @property
    def k_pack(self) -> int:
        return 1

    @property
    def wg_wait(self) -> int:
        return 0

    # ------------------------------------------------------------------ shapes and dtypes
    @property
    def M(self) -> Any:
        return self.CRegion.region[-2].extent

    @property
    def N(self) -> Any:
        return self.CRegion.region[-1].extent

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
