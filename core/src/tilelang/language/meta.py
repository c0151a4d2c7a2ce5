"""Python classes of kernel-time helpers: ``T.inline`` (a method interpreted like a ``T.macro`` at each call)
and ``T.meta_class`` (a class whose state lives in ``T.alloc_var`` buffers, e.g. tile schedulers).

Inside an inlined method, ``self.x[0] = v`` stores into a state buffer and ``self.x[0]`` reads it. A
``meta_class`` inlines every method that assigns to a subscript; methods that only build expressions (and
``__init__``, properties, static and class methods) stay plain Python. A ``name=`` constructor argument names
the state buffers ``{name}_{attr}`` in the IR.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

_C = TypeVar("_C", bound=type)


class _InlineMethod:
    """A method whose body the front end interprets at each call inside a kernel (``self`` bound)."""

    def __init__(self, func: Callable[..., Any]):
        from tilelang.frontend.macro import Macro

        self._macro = Macro(func)
        self.__name__ = getattr(func, "__name__", "inline")
        self.__doc__ = getattr(func, "__doc__", None)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return lambda *args, **kwargs: self._macro(obj, *args, **kwargs)


def inline(func: Callable[..., Any]) -> _InlineMethod:
    """Decorator: a method interpreted inline (like ``T.macro``) wherever it is called in a kernel."""
    return _InlineMethod(func)


def _emits_store(func: Callable[..., Any]) -> bool:
    """Whether `func` assigns to a subscript (``self.x[...] = ...``, augmented or annotated)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return True  # cannot tell: interpret it, which is always correct inside a kernel
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if any(isinstance(sub, ast.Subscript) for t in targets for sub in ast.walk(t)):
            return True
    return False


def _install_naming(cls: type) -> None:
    """``name=`` in the constructor names every buffer assigned to an attribute ``{name}_{attr}``."""
    orig_init = cls.__init__
    signature = inspect.signature(orig_init)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            name = bound.arguments.get("name")
        except TypeError:
            name = None
        object.__setattr__(self, "_meta_name", name)
        orig_init(self, *args, **kwargs)

    def __setattr__(self: Any, attr: str, value: Any) -> None:
        object.__setattr__(self, attr, value)
        prefix = getattr(self, "_meta_name", None)
        if prefix and attr.lstrip("_"):
            from tilelang.ir.region import is_buffer

            if is_buffer(value):
                from tvm.script.ir_builder import IRBuilder

                IRBuilder.name(f"{prefix}_{attr.lstrip('_')}", value)

    cls.__init__ = __init__  # type: ignore[method-assign]
    cls.__setattr__ = __setattr__  # type: ignore[method-assign]


def meta_class(cls: _C) -> _C:
    """Class decorator for kernel-time stateful helpers (see the module docstring)."""
    if cls.__dict__.get("_is_meta_class", False):
        return cls
    for attr, value in list(cls.__dict__.items()):
        if attr.startswith("__") or isinstance(value, (staticmethod, classmethod, property, _InlineMethod)):
            continue
        if inspect.isfunction(value) and _emits_store(value):
            setattr(cls, attr, _InlineMethod(value))
    if "__init__" in cls.__dict__:
        _install_naming(cls)
    cls._is_meta_class = True
    return cls
