"""Reduction folds for CUDA kernels: float32 ``max`` / ``min`` as the header's NaN-keeping ``tl_max_nan`` /
``tl_min_nan`` (one ``FMNMX.NAN``, PTX ``max.NaN``, on sm_80+) rather than core's compare-and-select."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import reduce_combine

_NAN_KEEPING = {"max": "tl_max_nan", "absmax": "tl_max_nan", "min": "tl_min_nan"}


def combine_f32(kind: str, acc: Any, x: Any) -> Any:
    """`reduce_combine` with float32 ``max`` / ``min`` / ``absmax`` as the header's ``tl_max_nan`` /
    ``tl_min_nan``: NaN-keeping as core's compare-and-select, but one ``FMNMX.NAN`` on sm_80+ instead of two
    compares, a predicate op and a select. Other kinds and dtypes: `reduce_combine`."""
    fn = _NAN_KEEPING.get(kind)
    if fn is None or str(acc.ty.dtype) != "float32" or str(x.ty.dtype) != "float32":
        return reduce_combine(kind, acc, x)
    return tirx.call_pure_extern("float32", fn, acc, tirx.abs(x) if kind == "absmax" else x)
