"""Which form a kernel function is written in, read from its source alone (no TVM, no interpreter).

- eager: the body is the kernel (``A: T.Tensor(...)`` declarations, ``T.const``, ``T.empty``, ``with T.Kernel``);
- lazy factory: the body defines and returns a ``@T.prim_func``;
- a ``T.prim_func`` may itself use the eager declarations (`declares_in_body`).
"""

from __future__ import annotations

import ast
from typing import Any

from tilelang.errors import SourceError
from tilelang.frontend.source import FunctionSource

__all__ = ["is_eager_function", "declares_in_body"]


def declares_in_body(fn: Any) -> bool:
    """Does `fn` declare its un-annotated parameters in the body (``A: T.Tensor(...)`` at the top level)?"""
    try:
        fdef = FunctionSource.of(fn).fdef
    except SourceError:
        return False
    args = fdef.args
    bare = {a.arg for a in args.posonlyargs + args.args if a.annotation is None}
    declared = {s.target.id for s in fdef.body
                if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)}
    return bool(bare) and bare <= declared


_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _nodes(stmt: ast.AST) -> Any:
    """The nodes of `stmt` in this function's own scope (nested function, lambda and class bodies left out)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _FUNCTION_SCOPES))


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _is_prim_func_decorator(dec: ast.expr) -> bool:
    """``@T.prim_func``, ``@prim_func``, ``@T.prim_func(...)``."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    return (isinstance(target, ast.Attribute) and target.attr == "prim_func") or (
        isinstance(target, ast.Name) and target.id == "prim_func")


def _defines_prim_func(fdef: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Does `fdef`'s body define a ``@T.prim_func`` (at any depth: in a ``with``, an ``if`` branch, ...)?"""
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and any(_is_prim_func_decorator(d) for d in node.decorator_list)
               for stmt in fdef.body for node in ast.walk(stmt))


def _is_eager_statement(stmt: ast.stmt) -> bool:
    """A tensor declaration (``A: T.Tensor(...)``), or a use of ``T.const`` / ``T.empty`` / ``T.Kernel`` in
    this function's own code (not in a helper it defines)."""
    if isinstance(stmt, _FUNCTION_SCOPES):
        return False
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return True
    for node in _nodes(stmt):
        if isinstance(node, ast.Call):
            name = _called_name(node)
            if name == "Kernel" or (name in ("const", "empty") and isinstance(node.func, ast.Attribute)):
                return True
    return False


def is_eager_function(fn: Any) -> bool:
    """Is `fn` an eager kernel (its body is the kernel: declares tensors, uses T.const / T.empty / T.Kernel)?

    A function that defines a ``@T.prim_func`` (anywhere in its body: inside a ``with`` or an ``if`` too) is a
    lazy kernel factory, as is one that only calls other code to build the PrimFunc it returns. What a ``with``
    statement holds decides, not the statement itself: ``with T.Kernel(...)`` is eager, ``with ctx():`` around a
    factory's code is not.
    """
    try:
        fdef = FunctionSource.of(fn).fdef
    except SourceError:
        return False
    if _defines_prim_func(fdef):
        return False
    return any(_is_eager_statement(stmt) for stmt in fdef.body)
