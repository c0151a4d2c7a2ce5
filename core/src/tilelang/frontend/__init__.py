"""The TileLang front end: Python kernel functions -> tirx PrimFuncs (the forms of ``docs/ir.md``).

- ``prim_func(fn)`` / ``build_prim_func(fn)``: a lazy kernel with annotated parameters -> PrimFunc.
- ``EagerProgram(fn)``, ``parse_eager(fn, *args, **kwargs) -> EagerKernel``: eager ``@tilelang.jit`` kernels,
  specialised per call (see ``tilelang.frontend.eager``).
- ``is_eager_function(fn)``: does `fn` use the eager form (rather than return a ``T.prim_func``)?
- ``Macro`` / ``macro``: ``T.macro``.
"""

from tilelang.frontend.build import build_prim_func, is_eager_function, prim_func
from tilelang.frontend.eager import UNBOUND, EagerKernel, EagerProgram, TensorArg, is_tensor_like, parse_eager
from tilelang.frontend.macro import Macro, macro

__all__ = [
    "UNBOUND",
    "EagerKernel",
    "EagerProgram",
    "Macro",
    "TensorArg",
    "build_prim_func",
    "is_eager_function",
    "is_tensor_like",
    "macro",
    "parse_eager",
    "prim_func",
]
