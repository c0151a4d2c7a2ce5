"""Marking functions as deprecated (the reference's `tilelang.utils.deprecated`)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["deprecated", "deprecated_warning"]


def deprecated_warning(method_name: str, new_method_name: str, phaseout_version: str | None = None) -> None:
    """Warn (DeprecationWarning) that `method_name` is deprecated in favour of `new_method_name`."""
    until = f" and will be removed in {phaseout_version}" if phaseout_version else ""
    warnings.warn(f"{method_name} is deprecated, use {new_method_name} instead{until}", DeprecationWarning,
                  stacklevel=3)


def deprecated(method_name: str, new_method_name: str, phaseout_version: str | None = None
               ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: calling the function warns that it is deprecated."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            deprecated_warning(method_name, new_method_name, phaseout_version)
            return func(*args, **kwargs)

        return wrapper

    return decorate
