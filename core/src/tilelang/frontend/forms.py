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


def is_eager_function(fn: Any) -> bool:
    """Is `fn` an eager kernel (body declares tensors / uses T.const / T.empty / T.Kernel directly)?

    A function that instead defines and returns a ``@T.prim_func`` is a lazy kernel factory.
    """
    try:
        fdef = FunctionSource.of(fn).fdef
    except SourceError:
        return False
    for stmt in fdef.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
            return True
        if isinstance(stmt, ast.With):
            return True
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "const", "empty", "Kernel"):
                return True
    return False
