"""Helpers of the reference's ``tilelang.language.eager.utils``: a function's AST and row-major strides."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from typing import Any


def get_ast(func: Callable[..., Any]) -> ast.Module:
    """The parsed source of `func` (a module holding its ``def``, dedented)."""
    from tilelang.frontend.source import FunctionSource

    return ast.Module(body=[copy.deepcopy(FunctionSource.of(func).fdef)], type_ignores=[])


def construct_strides(shape: tuple[Any, ...], allow_prim_expr: bool = True) -> tuple[Any, ...]:
    """Row-major strides of `shape` (expressions allowed unless `allow_prim_expr` is False)."""
    strides: list[Any] = []
    acc: Any = 1
    for extent in reversed(shape):
        if not allow_prim_expr and not isinstance(extent, int):
            raise ValueError(f"construct_strides: dimension {extent!r} is not an integer")
        strides.append(acc)
        acc = acc * extent
    return tuple(reversed(strides))
