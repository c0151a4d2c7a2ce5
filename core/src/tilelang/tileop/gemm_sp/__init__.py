"""``tl.gemm_sp``: the generic lowering (`GEMM_SP`, `lower_gemm_sp`), the implementation-class base (`GemmSPBase`)
and the instruction registry (`register_gemm_sp_impl` / `resolve_gemm_sp_impl`), where core's ``"generic"`` class
is registered.
"""

from tilelang.tileop.gemm_sp.gemm_sp_base import GemmSPBase
from tilelang.tileop.gemm_sp.generic import GEMM_SP, GemmSPGeneric, lower_gemm_sp
from tilelang.tileop.gemm_sp.registry import register_gemm_sp_impl, resolve_gemm_sp_impl

register_gemm_sp_impl("generic", "generic", lambda target: True, GemmSPGeneric)

__all__ = ["GEMM_SP", "GemmSPBase", "GemmSPGeneric", "lower_gemm_sp", "register_gemm_sp_impl",
           "resolve_gemm_sp_impl"]
