"""The JIT: ``@tilelang.jit``, `compile`, `par_compile` and `JITKernel`.

Importing this package imports neither TVM nor torch; compiling imports TVM, calling a kernel imports torch,
and loading a cached kernel needs only ``tvm_ffi`` (`tilelang.jit.runtime_loader`).

This module is itself callable (``tilelang.jit(...)`` is `jit`): importing the submodule ``tilelang.jit``
rebinds the package attribute ``tilelang.jit`` to the module, which must keep working as the decorator.
"""

import sys
import types
from typing import Any

from tilelang.jit.compiler import CompileOptions, compile, par_compile
from tilelang.jit.decorator import JITImpl, jit
from tilelang.jit.kernel import JITKernel

__all__ = ["jit", "compile", "par_compile", "JITKernel", "JITImpl", "CompileOptions"]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return jit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
