"""Which class implements a GEMM_SP (2:4-sparse A) instruction (``"generic"``, ``"cuda.mma.sp"``, ...) on a target.

The reference's ``tilelang.tileop.gemm_sp.registry``: backends call `register_gemm_sp_impl` with a predicate on the
target; `resolve_gemm_sp_impl` returns the one class that serves an instruction key there. Core registers
``"generic"`` (`tilelang.tileop.gemm_sp.generic.GemmSPGeneric`, every target). The lowering pass itself chooses
implementations through `tilelang.backend.tile_ops`; this registry is the class-level view of the same choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.tileop._inst_registry import ImplEntry, InstRegistry

GemmSPTargetPredicate = Callable[[Any], bool]
GemmSPImplEntry = ImplEntry

_REGISTRY = InstRegistry("GEMM_SP")
_GEMM_SP_IMPLS: list[GemmSPImplEntry] = _REGISTRY.entries

__all__ = ["GemmSPImplEntry", "GemmSPTargetPredicate", "gemm_sp_impls", "register_gemm_sp_impl", "resolve_gemm_sp_impl"]


def register_gemm_sp_impl(name: str, inst_name: str, predicate: GemmSPTargetPredicate, impl_class: type) -> None:
    """Register `impl_class` as `name` for instruction `inst_name` on targets accepted by `predicate`
    (registering `name` again replaces it)."""
    _REGISTRY.register(name, inst_name, predicate, impl_class)


def resolve_gemm_sp_impl(gemm_inst: str, target: Any) -> type:
    """The one class registered for GEMM_SP key `gemm_inst` whose predicate accepts `target`
    (ValueError for none or many)."""
    return _REGISTRY.resolve(gemm_inst, target)


def gemm_sp_impls() -> list[GemmSPImplEntry]:
    """A copy of the registered entries, in registration order."""
    return list(_GEMM_SP_IMPLS)
