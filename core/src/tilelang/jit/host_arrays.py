"""Calling a host (CPU) kernel with NumPy arrays: no torch needed.

A kernel that runs on the host accepts ``numpy.ndarray`` arguments where it takes tensors, and returns the outputs
it allocates (``out_idx``) as NumPy arrays. The checks are the torch path's (dtype by name, shape with symbolic
dims bound by the first array that has them, C-contiguity), with the same `KernelArgumentError` messages. A
launcher that marks itself ``accepts_array_views`` (the CPU backend's direct ctypes call of a cached library)
gets `ArrayView` objects (data pointer and shape) and torch is never imported: a command-line tool or a server
using a cached kernel on NumPy data starts without torch's second of import. Any other launcher gets zero-copy
``torch.from_numpy`` views. bfloat16 and float8 arrays need ``ml_dtypes`` (NumPy has no such dtypes).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.artifact import ParamInfo
from tilelang.errors import KernelArgumentError
from tilelang.jit.arguments import shape_problem

__all__ = ["ArrayView", "has_host_array", "is_host_array", "make_array_caller", "numpy_dtype_name"]

_NUMPY_NAMES = {"float8_e4m3": "float8_e4m3fn"}


def is_host_array(value: Any) -> bool:
    """Whether `value` is a NumPy array (checked without importing NumPy)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(value, numpy.ndarray)


def has_host_array(args: Sequence[Any]) -> bool:
    """Whether any of `args` is a NumPy array."""
    return "numpy" in sys.modules and any(is_host_array(a) for a in args)


def numpy_dtype_name(name: str) -> str:
    """The NumPy (or ml_dtypes) dtype name of a TVM dtype string."""
    return _NUMPY_NAMES.get(name, name)


class ArrayView:
    """What an ``accepts_array_views`` launcher reads of an argument: ``data_ptr()`` and ``shape``."""

    __slots__ = ("_ptr", "shape")

    def __init__(self, ptr: int, shape: tuple[int, ...]):
        self._ptr, self.shape = ptr, shape

    def data_ptr(self) -> int:
        return self._ptr


def _is_scalar(value: Any) -> bool:
    """A Python number or a NumPy scalar (``numpy.int64(3)``), not an array."""
    return isinstance(value, (int, float)) or (not is_host_array(value) and (
        hasattr(value, "__index__") or hasattr(value, "__float__")))


def _numpy_dtype(name: str, what: str) -> Any:
    import numpy

    try:
        return numpy.dtype(numpy_dtype_name(name))
    except TypeError:
        try:
            import ml_dtypes  # noqa: F401  # registers bfloat16 / float8 with NumPy

            return numpy.dtype(numpy_dtype_name(name))
        except (ImportError, TypeError):
            raise KernelArgumentError(f"{what} has dtype {name}, which NumPy cannot hold (install ml_dtypes, or "
                                      "pass torch tensors)") from None


def _aligned_empty(shape: Sequence[int], dtype: Any, align: int) -> Any:
    import numpy

    count = 1
    for d in shape:
        count *= int(d)
    nbytes = count * dtype.itemsize
    raw = numpy.empty(nbytes + align, dtype=numpy.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes].view(dtype).reshape(tuple(shape))


def make_array_caller(kernel_name: str, params: Sequence[ParamInfo], out_idx: Sequence[int], launcher: Any,
                      *, device_type: str | None, align: Sequence[int],
                      others: Callable[[], Callable[..., Any]] | None = None) -> Callable[..., Any]:
    """The ``call(*inputs)`` of one kernel for NumPy arguments (see the module docstring); a call with no NumPy
    array goes to ``others()``, the torch caller, when given."""
    inputs = [i for i in range(len(params)) if i not in set(out_idx)]
    views = bool(getattr(launcher, "accepts_array_views", False))

    def fail(idx: int, what: str) -> None:
        raise KernelArgumentError(f"kernel {kernel_name!r}, argument {params[idx].name!r}: {what}")

    def call(*args: Any) -> Any:
        if others is not None and not has_host_array(args):
            return others()(*args)
        if device_type not in (None, "cpu"):
            raise KernelArgumentError(f"kernel {kernel_name!r} runs on {device_type!r}: NumPy arrays are host memory; "
                                      f"pass torch tensors on {device_type!r}")
        if len(args) != len(inputs):
            names = ", ".join(params[i].name for i in inputs)
            raise KernelArgumentError(f"kernel {kernel_name!r} takes {len(inputs)} argument(s) ({names}), "
                                      f"got {len(args)}")
        full: list[Any] = [None] * len(params)
        dims: dict[str, tuple[int, str]] = {}
        realigned: list[tuple[Any, Any]] = []
        for idx, value in zip(inputs, args):
            p = params[idx]
            if not p.is_tensor:
                if not _is_scalar(value):
                    fail(idx, f"expected a {p.dtype} scalar, got {type(value).__name__}")
                full[idx] = value
                dims[p.name] = (int(value), p.name)
                continue
            if not is_host_array(value):
                fail(idx, f"expected a numpy.ndarray of dtype {p.dtype} and shape {list(p.shape)} (the other "
                          f"arguments are NumPy arrays), got {type(value).__module__}.{type(value).__qualname__}")
            if value.dtype.name != numpy_dtype_name(p.dtype):
                fail(idx, f"expected dtype {p.dtype}, got {value.dtype.name}")
            problem = shape_problem(p, list(value.shape), dims, "array")
            if problem:
                fail(idx, problem)
            if not value.flags.c_contiguous:
                strides = [s // value.itemsize for s in value.strides]
                fail(idx, f"expected a C-contiguous array, got strides {strides} (elements) for shape "
                          f"{list(value.shape)}; call numpy.ascontiguousarray first")
            if value.ctypes.data % align[idx]:
                copy = _aligned_empty(value.shape, value.dtype, align[idx])
                copy[...] = value
                realigned.append((value, copy))
                value = copy
            full[idx] = value
        outs = []
        for idx in out_idx:
            p = params[idx]
            shape = []
            for d in p.shape:
                if isinstance(d, str) and d not in dims:
                    raise KernelArgumentError(f"kernel {kernel_name!r}: cannot allocate output {p.name!r}: its dim "
                                              f"{d!r} is not the dim of any input")
                shape.append(d if isinstance(d, int) else dims[d][0])
            full[idx] = _aligned_empty(shape, _numpy_dtype(p.dtype, f"output {p.name!r}"), max(align[idx], 16))
            outs.append(full[idx])
        if views:
            launcher(*[ArrayView(a.ctypes.data, a.shape) if p.is_tensor else a for p, a in zip(params, full)])
        else:
            import torch

            launcher(*[torch.from_numpy(a) if p.is_tensor else a for p, a in zip(params, full)])
        for original, copy in realigned:
            if original.flags.writeable and original.tobytes() != copy.tobytes():
                original[...] = copy
        return outs[0] if len(outs) == 1 else outs if outs else None

    return call
