"""Helpers of the reference's ``tilelang.language.eager.utils``: a function's AST, closure variables and
rewritten code (`tilelang.language.eager.ast.mutate`), and row-major strides."""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from typing import Any


def get_ast(func: Callable[..., Any]) -> ast.Module:
    """The parsed source of `func`: a module holding its ``def`` (dedented), with the line numbers of its file."""
    from tilelang.frontend.source import FunctionSource

    src = FunctionSource.of(func)
    tree = ast.Module(body=[copy.deepcopy(src.fdef)], type_ignores=[])
    return ast.increment_lineno(tree, src.first_line - 1)


def get_func_nonlocals(func: Callable[..., Any]) -> dict[str, Any]:
    """The closure variables of `func` that are bound (name -> value)."""
    out: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a cell not assigned yet (a name defined later in the enclosing function)
            continue
    return out


def get_compiled_object(tree: ast.Module, name: str, filename: str, globals: dict[str, Any]) -> Any:
    """Compile `tree` (attributed to `filename`) and return what it defines as `name`; its functions see `globals`
    (the namespace is not copied or modified: the definitions land in a separate locals dict)."""
    defined: dict[str, Any] = {}
    exec(compile(ast.fix_missing_locations(tree), filename, "exec"), globals, defined)
    if name not in defined:
        raise NameError(f"the compiled code defines no {name!r}")
    return defined[name]


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
