"""Errors of eager kernel building (the reference's ``tilelang.jit.exceptions``)."""

from __future__ import annotations

from tilelang.errors import TileLangError

__all__ = ["JITNoBuilderError", "EagerJITBuildError"]


class JITNoBuilderError(TileLangError):
    """An eager-only construct (``T.const``, ``T.Kernel`` in an eager kernel) ran outside a kernel being built."""


class EagerJITBuildError(TileLangError):
    """Building an eager ``@tilelang.jit`` kernel failed."""
