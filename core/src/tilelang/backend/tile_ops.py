"""Tile-operator implementations: which lowering of gemm / copy / reduce / ... serves which target.

Core registers a generic, correct implementation of every tile op (priority 0, any target), so a new backend
works before it writes one; backends register faster ones with a higher priority and predicates on the target
(``supports_target``) and on the op instance (``applies``: dtypes, shapes, scopes). The highest-priority match
wins; no match, or two at the top priority, is a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.backend._registry import Registry, accepts, load_for_key
from tilelang.backend.host_codegen import TargetPredicate
from tilelang.backend.select import select_one
from tilelang.backend.target import kind_of

__all__ = ["TileOpImpl", "register_tile_op_impl", "register_lazy_tile_op_impls", "tile_op_impls_for",
           "resolve_tile_op_impl", "ANY_TARGET"]

ANY_TARGET = "*"  # the key of implementations that serve every target kind


@dataclass(frozen=True, slots=True)
class TileOpImpl:
    """One lowering of tile op `op` (e.g. ``"tl.gemm"``): ``lower(ctx) -> tirx.Stmt``.

    `ctx` is the lowering context built by core's tile-op lowering pass (the call, its regions, the target,
    the layouts and thread count); `applies(ctx)` may refuse instances this implementation cannot handle.
    """

    op: str
    name: str
    lower: Callable[[Any], Any]
    supports_target: TargetPredicate | None = None
    applies: Callable[[Any], bool] | None = None
    priority: int = 0

    def matches(self, target: Any, ctx: Any = None) -> bool:
        """Whether this implementation serves `target` and, when given, the op instance `ctx`."""
        if not accepts(self.supports_target, target):
            return False
        return ctx is None or self.applies is None or bool(self.applies(ctx))


# key: target kind (or ANY_TARGET); entries are named "<op>/<name>" so one kind may hold many ops
_TILE_OPS: Registry[TileOpImpl] = Registry("tile-op implementation", name_of=lambda i: f"{i.op}/{i.name}",
                                           entry_type=TileOpImpl)


def register_tile_op_impl(impl: TileOpImpl, *, target_kind: str = ANY_TARGET, override: bool = False) -> TileOpImpl:
    """Register `impl` for `target_kind` (default: every target, filtered by its predicates)."""
    return _TILE_OPS.register(target_kind, impl, override=override)


def register_lazy_tile_op_impls(target_kind: str, import_path: str) -> None:
    """Register the TileOpImpl (or sequence) at ``"module:attr"`` for `target_kind`, imported on first use."""
    _TILE_OPS.register_lazy(target_kind, import_path)


def tile_op_impls_for(op: str, target: Any) -> list[TileOpImpl]:
    """Every implementation of `op` registered for `target`'s kind or for any target."""
    kind = kind_of(target)
    load_for_key(kind)
    return [i for key in (kind, ANY_TARGET) for i in _TILE_OPS.get(key) if i.op == op]


def resolve_tile_op_impl(op: str, target: Any, ctx: Any = None) -> TileOpImpl:
    """The highest-priority implementation of `op` matching `target` (and `ctx`)."""
    registered = tile_op_impls_for(op, target)
    matching = [i for i in registered if i.matches(target, ctx)]
    return select_one(matching, what=f"implementation of {op}", request=f"target kind {kind_of(target)!r}",
                      registered=registered)
