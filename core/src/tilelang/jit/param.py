"""Typing helpers of the JIT decorator (the reference's ``tilelang.jit.param``): the parameter spec of a decorated
function and the types of what it returns before and after compilation."""

from __future__ import annotations

from typing import Any, ParamSpec, TypeVar

__all__ = ["Program", "Kernel", "_P", "_RProg"]

_P = ParamSpec("_P")


class Program:
    """What a lazy kernel factory returns before compilation (a PrimFunc in practice)."""

    def __init__(self, data: Any):
        self.data = data

    def __repr__(self) -> str:
        return f"Program({self.data!r})"


class Kernel:
    """What a decorated function returns after compilation: source and output indices (a JITKernel in practice)."""

    def __init__(self, source: str, out_idx: Any):
        self.source_code = source
        self.out_idx = out_idx

    def get_kernel_source(self) -> str:
        return self.source_code

    def __repr__(self) -> str:
        return f"Kernel({self.source_code[:20]!r}...)"


_RProg = TypeVar("_RProg", bound=Program)
