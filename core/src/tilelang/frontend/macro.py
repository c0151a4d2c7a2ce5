"""``T.macro``: a function whose body is interpreted inline at each call site inside a kernel."""

from __future__ import annotations

import functools
from typing import Any

from tilelang.errors import KernelSyntaxError
from tilelang.frontend import state as _state


class Macro:
    """A kernel fragment; calling it inside a kernel interprets its body there and returns its ``return`` value.

    Arguments are bound like Python arguments; a scalar argument that reads memory is bound once (``Bind``).
    """

    def __init__(self, fn: Any):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        st = _state.current()
        if st is None or not st.interpreters:
            raise KernelSyntaxError(f"macro {self.fn.__name__} can only be called inside a kernel body")
        return st.interpreters[-1].call_macro(self, args, kwargs)

    def __tilelang_key__(self) -> Any:
        """What the kernel cache keys a macro by (`tilelang.cache.keys.canonical`): its function."""
        return self.fn

    def __repr__(self) -> str:
        return f"<T.macro {self.fn.__qualname__}>"


def macro(fn: Any = None) -> Any:
    """Decorator: make `fn` a :class:`Macro` (also usable as ``@T.macro()``)."""
    return Macro(fn) if fn is not None else Macro
