"""Reduction folds for CUDA kernels: float32 ``max`` / ``min`` as the header's NaN-keeping ``tl_max_nan`` /
``tl_min_nan`` (one ``FMNMX.NAN``, PTX ``max.NaN``, on sm_80+) rather than core's compare-and-select."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import reduce_combine

_NAN_KEEPING = {"max": "tl_max_nan", "absmax": "tl_max_nan", "min": "tl_min_nan"}


def fold(kind: str, acc: Any, x: Any) -> Any:
    """`acc` folded with `x` (of acc's dtype: float32, or half / bfloat16 on sm_80+): sums as additions, max / min
    through the header's NaN-keeping ``tl_max_nan`` / ``tl_min_nan``."""
    if kind in ("abssum", "absmax"):
        x = tirx.abs(x)
    if kind in ("sum", "abssum"):
        return acc + x
    return tirx.call_pure_extern(str(acc.ty.dtype), _NAN_KEEPING[kind], acc, x)


def combine_f32(kind: str, acc: Any, x: Any) -> Any:
    """`reduce_combine` with float32 ``max`` / ``min`` / ``absmax`` as `fold`: NaN-keeping as core's
    compare-and-select, but one ``FMNMX.NAN`` on sm_80+ instead of two compares, a predicate op and a select.
    Other kinds and dtypes: `reduce_combine`."""
    if kind not in _NAN_KEEPING or str(acc.ty.dtype) != "float32" or str(x.ty.dtype) != "float32":
        return reduce_combine(kind, acc, x)
    return fold(kind, acc, x)
