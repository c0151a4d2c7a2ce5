"""Parameter annotations: ``T.Tensor(shape, dtype)``, ``T.Tensor[shape, dtype]``, ``T.Buffer``, scoped buffers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.language.dtypes import canonical


def normalize_shape(shape: Any, what: str = "shape") -> tuple[Any, ...]:
    """A shape as a tuple of ints / integer expressions; KernelTypeError otherwise. A shape of plain ints needs no
    TVM (a module-level ``T.Tensor((M, N), ...)`` annotation is evaluated before any kernel is built)."""
    if type(shape) is int:
        shape = (shape,)
    if isinstance(shape, (tuple, list)) and all(type(d) is int and d >= 0 for d in shape):
        return tuple(shape)
    import tvm
    import tvm.tirx

    if isinstance(shape, int) or isinstance(shape, tvm.ir.Expr):
        shape = (shape,)
    if not isinstance(shape, Sequence) and not hasattr(shape, "__iter__"):
        raise KernelTypeError(f"{what} must be a tuple of integers or integer expressions, got {shape!r}")
    dims = []
    for d in shape:
        if isinstance(d, bool):
            raise KernelTypeError(f"{what} entries must be integers, got {d!r}")
        if isinstance(d, int):
            if d < 0:
                raise KernelTypeError(f"{what} entries must be non-negative, got {d}")
            dims.append(d)
        elif isinstance(d, tvm.ir.Expr) and tvm.ir.is_prim_expr(d) and str(d.ty.dtype).startswith(("int", "uint")):
            dims.append(int(d.value) if isinstance(d, tvm.tirx.IntImm) else d)
        else:
            raise KernelTypeError(f"{what} entries must be integers or integer expressions, got {d!r}")
    return tuple(dims)


@dataclass(frozen=True)
class TensorSpec:
    """A declared tensor: what a ``T.Tensor`` annotation evaluates to."""

    shape: tuple[Any, ...]
    dtype: str
    scope: str = "global"
    strides: tuple[Any, ...] | None = None

    def __tilelang_key__(self) -> Any:
        """What the kernel cache keys an annotation by (`tilelang.cache.keys.canonical`)."""
        return [list(self.shape), self.dtype, self.scope, None if self.strides is None else list(self.strides)]

    def make_buffer(self, name: str, span: Any = None) -> Any:
        """The parameter buffer `name` (with the source `span` of its declaration, when given)."""
        from tvm import tirx

        return tirx.decl_buffer(self.shape, self.dtype, name=name, scope=self.scope, strides=self.strides,
                                span=span)


class _TensorProxy:
    """``T.Tensor((M, K), dtype)`` or ``T.Tensor[(M, K), dtype]``."""

    def __init__(self, scope: str, name: str):
        self._scope = scope
        self._name = name

    def __call__(self, shape: Any, dtype: Any = "float32", data: Any = None, *, strides: Any = None,
                 scope: str | None = None, **_ignored: Any) -> Any:
        """The spec of a tensor; with `data` (``T.Tensor(shape, dtype, A.data)``) a buffer over that storage."""
        if data is not None:
            from tilelang.language.views import _declare

            st = None if strides is None else normalize_shape(strides, "strides")
            return _declare(shape, canonical(dtype), data, scope or self._scope, st)
        st = None if strides is None else normalize_shape(strides, "strides")
        return TensorSpec(normalize_shape(shape), canonical(dtype), scope or self._scope, st)

    def __getitem__(self, key: Any) -> TensorSpec:
        if not isinstance(key, tuple) or len(key) != 2:
            raise KernelTypeError(f"use T.{self._name}[shape, dtype]")
        return self(key[0], key[1])

    def __repr__(self) -> str:
        return f"T.{self._name}"


class _StridedTensorProxy(_TensorProxy):
    """``T.StridedTensor((M, K), (S, 1), dtype)``: a tensor whose strides are part of its declaration."""

    def __call__(self, shape: Any, strides: Any = None, dtype: Any = "float32", data: Any = None, *,
                 scope: str | None = None, **_ignored: Any) -> Any:
        if strides is None:
            raise KernelTypeError("T.StridedTensor(shape, strides, dtype) needs the strides")
        dims, st = normalize_shape(shape), normalize_shape(strides, "strides")
        if len(dims) != len(st):
            raise ValueError("Invalid shape/strides' dimensions")
        return super().__call__(dims, dtype, data, strides=st, scope=scope)

    def __getitem__(self, key: Any) -> TensorSpec:
        if not isinstance(key, tuple) or len(key) != 3:
            raise KernelTypeError(f"use T.{self._name}[shape, strides, dtype]")
        return self(key[0], key[1], key[2])


Tensor = _TensorProxy("global", "Tensor")
Buffer = _TensorProxy("global", "Buffer")
StridedTensor = _StridedTensorProxy("global", "StridedTensor")
SharedBuffer = _TensorProxy("shared.dyn", "SharedBuffer")
FragmentBuffer = _TensorProxy("local.fragment", "FragmentBuffer")
LocalBuffer = _TensorProxy("local", "LocalBuffer")
