"""The reference's ``tilelang.language.eager.ast`` module path.

The reference builds kernels by rewriting their AST into builder calls (``mutate``, ``DSLMutator``,
``BaseBuilder``); TileLang here interprets the AST directly (`tilelang.frontend.interpreter`), so that machinery
has no counterpart. `mutate` raises a NotImplementedError saying so; use ``T.prim_func`` / ``@tilelang.jit``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.language.eager import utils  # noqa: F401  (the reference's ``eager.ast.utils``)


def mutate(func: Callable[..., Any]) -> Any:
    """Not available: TileLang interprets kernels instead of generating builder code from their AST."""
    raise NotImplementedError("tilelang.language.eager.ast.mutate generates builder code in the reference TileLang; "
                              "this TileLang interprets kernels directly: decorate the function with T.prim_func or "
                              "@tilelang.jit instead")
