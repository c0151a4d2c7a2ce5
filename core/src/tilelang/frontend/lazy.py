"""``T.prim_func``, and the module-level kernels it leaves unparsed until they are used (`LazyPrimFunc`).

Parsing a kernel builds TVM IR, so decorating one imports TVM (seconds). A process that only loads cached
kernels needs neither: ``@T.prim_func`` on a module-level function, while TVM is not imported yet, returns a
`LazyPrimFunc` instead of parsing. It stands for the PrimFunc: attribute access, printing, calling it,
``isinstance(f, tvm.tirx.PrimFunc)`` and passing it to a TVM function parse it (once) and act on the real
PrimFunc, while ``tilelang.compile(f)`` first looks the kernel up by its source key
(`tilelang.jit.source_keys`) and loads a cached kernel without parsing or importing TVM.

The kernel reads its module's globals as they were when it was decorated (a copy is kept), as a parse at that
moment would have; Python helpers it calls read their own module when it is parsed. Kernels decorated inside a
function, after TVM is imported, or in the eager form (``A: T.Tensor(...)`` in the body) are parsed at once,
and ``TILELANG_LAZY_PRIM_FUNC=0`` parses every kernel at once. A kernel with an error then reports it on first
use rather than at its ``def``.
"""

from __future__ import annotations

import inspect
import sys
import threading
import types
from typing import Any

from tilelang import env
from tilelang.errors import USER_ERRORS, KernelSyntaxError, for_the_user, surface_user_errors

__all__ = ["LazyPrimFunc", "prim_func", "unwrap_prim_func"]


class LazyPrimFunc:
    """A module-level ``@T.prim_func`` kernel, parsed into its tirx PrimFunc on first use (module docstring)."""

    __slots__ = ("__weakref__", "_func", "_lock", "_source")

    def __init__(self, fn: types.FunctionType):
        source = types.FunctionType(fn.__code__, dict(fn.__globals__), fn.__name__, fn.__defaults__, fn.__closure__)
        source.__kwdefaults__ = fn.__kwdefaults__
        source.__annotations__ = fn.__annotations__
        source.__qualname__ = fn.__qualname__
        source.__module__ = fn.__module__
        source.__doc__ = fn.__doc__
        self._source = source
        self._func: Any = None
        self._lock = threading.RLock()

    @property
    def source_function(self) -> types.FunctionType:
        """The decorated function, bound to the copy of its module's globals taken when it was decorated."""
        return self._source

    @property
    def is_built(self) -> bool:
        return self._func is not None

    def materialize(self) -> Any:
        """The tirx PrimFunc (parsed on the first call; TVM is imported then)."""
        func = self._func
        if func is None:
            with self._lock:
                if self._func is None:
                    from tilelang.frontend.build import build_prim_func

                    self._func = surface_user_errors(build_prim_func)(self._source)
                func = self._func
        return func

    # ------------------------------------------------------------------------------------------ the PrimFunc
    @surface_user_errors  # a mistake in the kernel, found now, is reported as at decoration
    def __getattr__(self, name: str) -> Any:
        if name in LazyPrimFunc.__slots__ or (name.startswith("__") and name.endswith("__")
                                              and "tvm" not in sys.modules):
            raise AttributeError(name)  # tools probing dunders (pytest, inspect) do not build the kernel
        return getattr(self.materialize(), name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        """The PrimFunc's class once TVM is loaded, so that ``isinstance(f, tvm.tirx.PrimFunc)`` holds (asking
        needs TVM imported, and then builds the kernel); this class before."""
        if "tvm" in sys.modules:
            return type(self.materialize())
        return LazyPrimFunc

    def __tvm_ffi_object__(self) -> Any:
        """Passed to a TVM function, the kernel is its PrimFunc (the ``tvm_ffi`` argument protocol)."""
        return self.materialize()

    def __tilelang_key__(self) -> Any:
        """What the kernel cache keys this kernel by (`tilelang.cache.keys.canonical`): its source function."""
        return self._source

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.materialize()(*args, **kwargs)

    def __getitem__(self, item: Any) -> Any:
        return self.materialize()[item]

    def __eq__(self, other: Any) -> bool:
        if other is self:
            return True
        if self._func is None or isinstance(other, LazyPrimFunc):
            return False  # an unbuilt kernel is no PrimFunc made elsewhere
        return bool(self._func == other)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return repr(self.materialize())

    def __str__(self) -> str:
        return str(self.materialize())

    # TVM IR is immutable: a copy is the PrimFunc itself (copying a tirx PrimFunc goes through TVM's JSON writer,
    # which crashes on tirx), and pickling is refused with a message rather than left to that writer
    def __copy__(self) -> Any:
        return self.materialize()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self.materialize()

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"cannot pickle the T.prim_func kernel {self._source.__qualname__!r}: pickle the function "
                        "(or module) that defines it, or the compiled kernel's cache key")


def unwrap_prim_func(func: Any) -> Any:
    """`func` itself, or the PrimFunc of a `LazyPrimFunc` (built now)."""
    return func.materialize() if type(func) is LazyPrimFunc else func


def _can_defer(fn: types.FunctionType, outer: types.FrameType) -> bool:
    if outer.f_code.co_name != "<module>" or "tvm" in sys.modules or fn.__closure__:
        return False
    if not env.is_lazy_prim_func_enabled():
        return False
    from tilelang.frontend.forms import declares_in_body

    return not declares_in_body(fn)


def prim_func(fn: Any = None, *, private: bool = False, check_well_formed: bool = False) -> Any:
    """Decorator: the kernel's tirx PrimFunc (a `LazyPrimFunc` for a module-level kernel decorated before TVM is
    imported; see the module docstring)."""
    del private, check_well_formed  # accepted for reference compatibility
    outer = sys._getframe(1)

    @surface_user_errors
    def wrap(f: Any) -> Any:
        if not inspect.isfunction(f):
            raise KernelSyntaxError(f"T.prim_func decorates a function, got {type(f).__name__}")
        if _can_defer(f, outer):
            return LazyPrimFunc(f)
        from tilelang.frontend.build import build_decorated

        return build_decorated(f, outer)

    try:
        return wrap(fn) if fn is not None else wrap
    except USER_ERRORS as exc:
        raise for_the_user(exc) from exc.__cause__  # the error is in your kernel: read its message
