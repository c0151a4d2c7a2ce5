"""Which class implements a GEMM instruction (``"generic"``, ``"cuda.mma"``, ...) on a target.

The reference's ``tilelang.tileop.gemm.registry``: backends call `register_gemm_impl` with a predicate on the
target; `resolve_gemm_impl` returns the one class that serves an instruction key there. Core registers
``"generic"`` (`tilelang.tileop.gemm.generic.GemmGeneric`, every target). The lowering pass itself chooses
implementations through `tilelang.backend.tile_ops`; this registry is the class-level view of the same choice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.tileop._inst_registry import ImplEntry, InstRegistry

GemmTargetPredicate = Callable[[Any], bool]
GemmImplEntry = ImplEntry

_REGISTRY = InstRegistry("GEMM")
_GEMM_IMPLS: list[GemmImplEntry] = _REGISTRY.entries

__all__ = ["GemmImplEntry", "GemmTargetPredicate", "gemm_impls", "register_gemm_impl", "resolve_gemm_impl"]


def register_gemm_impl(name: str, inst_name: str, predicate: GemmTargetPredicate, impl_class: type) -> None:
    """Register `impl_class` as `name` for instruction `inst_name` on targets accepted by `predicate`
    (registering `name` again replaces it)."""
    _REGISTRY.register(name, inst_name, predicate, impl_class)


def resolve_gemm_impl(gemm_inst: str, target: Any) -> type:
    """The one class registered for `gemm_inst` whose predicate accepts `target` (ValueError for none or many)."""
    return _REGISTRY.resolve(gemm_inst, target)


def gemm_impls() -> list[GemmImplEntry]:
    """A copy of the registered entries, in registration order."""
    return list(_GEMM_IMPLS)
