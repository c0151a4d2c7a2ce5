"""Choosing one implementation among registered candidates: by priority, with clear errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from tilelang.errors import AmbiguousImplementationError, NoImplementationError

T = TypeVar("T")


def select_one(candidates: Sequence[T], *, what: str, request: str, registered: Sequence[Any] = (),
               owners: Sequence[str | None] = (), kind: str | None = None) -> T:
    """The candidate with the highest ``priority`` (attribute, default 0).

    No candidate raises NoImplementationError listing what is registered (or, when target kind `kind` has no
    working backend, BackendNotInstalled / BackendLoadError); two sharing the top priority raise
    AmbiguousImplementationError naming both (and the backends that registered them).
    """
    if not candidates:
        if kind is not None and not registered:
            from tilelang.backend import plugins

            plugins.check_kind(kind)
        names = ", ".join(getattr(r, "name", repr(r)) for r in registered)
        detail = f"; registered but not matching: {names}" if names else ""
        raise NoImplementationError(f"no {what} matches {request}{detail}")
    ranked = sorted(candidates, key=lambda c: -getattr(c, "priority", 0))
    top = getattr(ranked[0], "priority", 0)
    tied = [c for c in ranked if getattr(c, "priority", 0) == top]
    if len(tied) > 1:
        owner_of = {id(r): o for r, o in zip(registered, owners)}
        desc = ", ".join(
            f"{getattr(c, 'name', c)!r}" + (f" (backend {owner_of[id(c)]!r})" if owner_of.get(id(c)) else "")
            for c in tied
        )
        raise AmbiguousImplementationError(
            f"{len(tied)} candidates for {what} match {request} with equal priority {top}: {desc}. "
            "Separate them with supports_target predicates or different priorities."
        )
    return ranked[0]
