"""How a ``@tilelang.jit`` call binds its arguments: compile-time key, runtime tensors, compile kwargs.

`JITFunc` is the reference TileLang's wrapper of the decorated function (``JITImpl.func``):
``parse_args(*args, **kwargs)`` returns ``(key, tensor_args)`` and ``_parse_phase1_key`` returns
``(p1_key, tensor_args, compile_kwargs)``. The phase-1 key holds every compile-time value in parameter order,
defaults applied (so positional, keyword and reordered call forms agree), extra keyword arguments (compile-time
``T.const`` bindings) as a sorted tuple, and ``**kwargs`` flattened. Lists, dicts and sets are frozen into hashable
parts; any other unhashable value is a TypeError naming it. Tensor parameters (eager kernels) are runtime inputs and
stay out of the key. `CallFormCache` memoises lazy factories by their raw call form.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JITFunc", "CallFormCache", "freeze_key_part", "tensor_parameters", "CALL_FORM_MISS"]

_MISSING = object()
CALL_FORM_MISS = object()


def freeze_key_part(value: Any) -> Any:
    """`value` as a hashable key part (lists, dicts, sets and tuples recursively); TypeError otherwise."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: repr(kv[0]))
        return dict, tuple((freeze_key_part(k), freeze_key_part(v)) for k, v in items)
    if isinstance(value, list):
        return list, tuple(freeze_key_part(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return type(value), tuple(sorted((freeze_key_part(v) for v in value), key=repr))
    if isinstance(value, tuple):
        return tuple(freeze_key_part(v) for v in value)
    if not isinstance(value, Hashable):
        raise TypeError(f"Unsupported unhashable JIT compile-time cache key value of type "
                        f"{type(value).__qualname__}: {value!r}")
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"Unsupported unhashable JIT compile-time cache key value of type "
                        f"{type(value).__qualname__}: {value!r}") from None
    return value


def _extra_key(extra: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(extra.items()))


def tensor_parameters(fn: Callable[..., Any]) -> set[str]:
    """Parameters of an eager kernel that are runtime tensors: annotated ``name: T.Tensor[...]`` (or any buffer
    type) in the signature or at the top of the body."""
    try:
        from tilelang.frontend.source import FunctionSource

        fdef = FunctionSource.of(fn).fdef
    except Exception:
        return set()
    params = {a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs)}
    found = set()
    for arg in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs):
        if arg.annotation is not None and _is_buffer_annotation(arg.annotation):
            found.add(arg.arg)
    for stmt in fdef.body:
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in params
                and _is_buffer_annotation(stmt.annotation)):
            found.add(stmt.target.id)
    return found


def _is_buffer_annotation(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return any(word in text for word in ("Tensor", "Buffer", "Ref"))


class JITArgumentBinder:
    """Binds a call of the decorated function (see the module docstring)."""

    def __init__(self, signature: inspect.Signature, tensor_names: set[str]):
        self.signature = signature
        self.tensor_names = set(tensor_names)
        self.params = tuple(signature.parameters.values())
        self.names = tuple(p.name for p in self.params)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.defaults = tuple(p.default if p.default is not inspect.Parameter.empty else _MISSING
                              for p in self.params)
        self.positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in self.params)
        self.python_rules = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in self.params)

    def bind(self, args: tuple, kwargs: dict) -> tuple[tuple, dict[str, Any], dict[str, Any]]:
        """``(p1_key, tensor_args, compile_kwargs)``."""
        if self.python_rules:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return self._pack(bound.arguments, {})
        if len(args) > self.positional:
            raise TypeError(f"too many positional arguments for JIT function: expected at most {self.positional}, "
                            f"got {len(args)}")
        values = list(self.defaults)
        values[:len(args)] = args
        extra: dict[str, Any] = {}
        for name, value in kwargs.items():
            i = self.index.get(name)
            if i is None:
                extra[name] = value  # a compile-time binding of a T.const name
                continue
            if i < len(args):
                raise TypeError(f"got multiple values for argument '{name}'")
            values[i] = value
        for name, value in zip(self.names, values):
            if value is _MISSING and name not in self.tensor_names:
                raise TypeError(f"missing a required argument: '{name}'")
        return self._pack({n: v for n, v in zip(self.names, values) if v is not _MISSING}, extra)

    def _pack(self, arguments: dict[str, Any], extra: dict[str, Any]) -> tuple[tuple, dict[str, Any], dict[str, Any]]:
        key: list[Any] = []
        tensors: dict[str, Any] = {}
        compile_kwargs: dict[str, Any] = {}
        for param in self.params:
            if param.name not in arguments:
                continue
            value = arguments[param.name]
            if param.kind == param.VAR_KEYWORD:
                if value:
                    key.append(_extra_key(value))
                    compile_kwargs.update(value)
            elif param.kind == param.VAR_POSITIONAL:
                key.append(tuple(value))
                compile_kwargs[param.name] = value
            elif param.name in self.tensor_names:
                tensors[param.name] = value
            else:
                key.append(value)
                compile_kwargs[param.name] = value
        if extra:
            key.append(_extra_key(extra))
            compile_kwargs.update(extra)
        return tuple(freeze_key_part(v) for v in key), tensors, compile_kwargs


@dataclass
class JITFunc:
    """The decorated function as the JIT sees it (``JITImpl.func``); `mode` is ``"lazy"`` or ``"eager"``."""

    orig_func: Callable[..., Any]
    mode: str = "auto"
    tensor_args: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.signature = inspect.signature(self.orig_func)
        self.arg_names = list(self.signature.parameters)
        if not self.tensor_args and self.mode == "eager":
            self.tensor_args = {name: None for name in tensor_parameters(self.orig_func)}
        self._binder = JITArgumentBinder(self.signature, set(self.tensor_args))

    def set_mode(self, mode: str) -> None:
        """Set the execution mode (``"lazy"`` / ``"eager"``)."""
        if mode not in ("lazy", "eager"):
            raise ValueError(f"Invalid jit mode: {mode!r}, expected 'lazy' or 'eager'")
        self.mode = mode

    def _parse_phase1_key(self, *args: Any, **kwargs: Any) -> tuple[tuple, dict[str, Any], dict[str, Any]]:
        return self._binder.bind(args, kwargs)

    def parse_args(self, *args: Any, **kwargs: Any) -> tuple[tuple, dict[str, Any]]:
        """``((p1_key, p2_key), tensor_args)``: p2_key is None without tensors, else their shapes and dtypes."""
        p1_key, tensors, _ = self._binder.bind(args, kwargs)
        if not self.tensor_args:
            return (p1_key, None), {}
        p2_key = tuple((name, tuple(getattr(t, "shape", ())), str(getattr(t, "dtype", "")))
                       for name, t in tensors.items())
        return (p1_key, p2_key), tensors

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.orig_func(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name in ("__closure__", "__code__", "__name__", "__qualname__", "__globals__", "__wrapped__",
                    "__module__", "__defaults__", "__kwdefaults__"):
            return getattr(self.orig_func, name)
        raise AttributeError(name)


@dataclass
class CallFormCache:
    """Kernels of a lazy factory by raw call form ``(args, kwargs items)``; the last hit is checked first."""

    entries: dict[Any, Any] = field(default_factory=dict)
    last: tuple[tuple, dict, Any] | None = None

    def clear(self) -> None:
        self.entries.clear()
        self.last = None

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, args: tuple, kwargs: dict) -> tuple[Any, Any]:
        """``(kernel or CALL_FORM_MISS, key to store under)``; TypeError for unhashable arguments."""
        if self.last is not None and self.last[0] == args and self.last[1] == kwargs:
            return self.last[2], None
        key = (args, tuple(kwargs.items()))
        kernel = self.entries.get(key, CALL_FORM_MISS)
        if kernel is not CALL_FORM_MISS:
            self.last = (args, dict(kwargs), kernel)
        return kernel, key

    def store(self, key: Any, kernel: Any) -> None:
        self.entries[key] = kernel
        self.last = (key[0], dict(key[1]), kernel)
