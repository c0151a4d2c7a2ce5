"""``tl.gemm``: the generic lowering (`GEMM`, `lower_gemm`), the implementation-class base (`GemmBase`) and the
instruction registry (`register_gemm_impl` / `resolve_gemm_impl`), where core's ``"generic"`` class is registered.
"""

from tilelang.tileop.gemm.gemm_base import GemmBase
from tilelang.tileop.gemm.generic import GEMM, GemmGeneric, gemm_operands, lower_gemm, operand_index
from tilelang.tileop.gemm.registry import register_gemm_impl, resolve_gemm_impl

register_gemm_impl("generic", "generic", lambda target: True, GemmGeneric)

__all__ = ["GEMM", "GemmBase", "GemmGeneric", "gemm_operands", "lower_gemm", "operand_index", "register_gemm_impl",
           "resolve_gemm_impl"]
