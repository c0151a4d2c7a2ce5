"""The TileLang front end: Python kernel functions -> tirx PrimFuncs (the forms of ``docs/ir.md``).

- ``prim_func(fn)`` (``T.prim_func``): the kernel's PrimFunc, parsed on first use for module-level kernels
  (`tilelang.frontend.lazy`); ``build_prim_func(fn)`` parses now.
- ``EagerProgram(fn)``, ``parse_eager(fn, *args, **kwargs) -> EagerKernel``: eager ``@tilelang.jit`` kernels,
  specialised per call (see ``tilelang.frontend.eager``).
- ``is_eager_function(fn)``: does `fn` use the eager form (rather than return a ``T.prim_func``)?
- ``Macro``: what ``T.macro`` (`tilelang.frontend.macro.macro`) makes.

Names are imported on first use: deciding a function's form or deferring a kernel needs neither the
interpreter nor TVM.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "build_prim_func": "build", "LazyPrimFunc": "lazy", "prim_func": "lazy", "is_eager_function": "forms",
    "UNBOUND": "eager", "EagerKernel": "eager", "EagerProgram": "eager", "TensorArg": "eager",
    "is_tensor_like": "eager", "parse_eager": "eager", "Macro": "macro",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
