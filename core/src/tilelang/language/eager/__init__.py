"""The reference's ``tilelang.language.eager`` surface: ``prim_func``, ``macro``, ``PrimFunc``, ``JITFunc``, ``Ref``,
``const``, ``annotate_compile_flags``, ``annotate_pass_configs`` and the dtypes, served by TileLang's front end."""

from typing import Any

from tilelang.language.eager.builder import (
    JITFunc,
    Ref,
    annotate_compile_flags,
    annotate_pass_configs,
    const,
    macro,
    prim_func,
)


def __getattr__(name: str) -> Any:
    from tilelang.language import dtypes
    from tilelang.language.eager import builder

    if name == "PrimFunc":
        return builder.PrimFunc
    return getattr(dtypes, name)


__all__ = ["JITFunc", "PrimFunc", "Ref", "annotate_compile_flags", "annotate_pass_configs", "const", "macro",
           "prim_func"]
