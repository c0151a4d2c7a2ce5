"""Buffers and regions: the operand forms of tile operators.

A buffer is a ``tvm.ir.Var`` of ``tirx.BufferType``; ``A[i, j]`` is a ``tvm.ir.TensorLoad``; ``A[a:b, c]`` is a
``tvm.ir.TensorRegion`` (what ``tirx.BufferRegion`` builds). Tile operators take regions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.ir._lazy_tvm import tirx, tvm

_ANALYZER: tvm.sym.Analyzer | None = None


def analyzer() -> tvm.sym.Analyzer:
    """A shared arithmetic analyzer (creating one costs ~0.1 ms)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = tvm.sym.Analyzer()
    return _ANALYZER


def is_buffer(x: Any) -> bool:
    return isinstance(x, tvm.ir.Var) and tirx.is_buffer_var(x)


def is_load(x: Any) -> bool:
    return isinstance(x, tvm.ir.TensorLoad)


def is_region(x: Any) -> bool:
    return isinstance(x, tvm.ir.TensorRegion)


def buffer_of(x: Any) -> tvm.ir.Var:
    """The buffer of a buffer, load or region."""
    if is_buffer(x):
        return x
    if is_load(x) or is_region(x):
        return x.source
    raise TypeError(f"expected a buffer, a buffer element or a buffer region, got {describe(x)}")


def buffer_shape(buf: tvm.ir.Var) -> list[Any]:
    return list(buf.ty.shape)


def buffer_dtype(buf: tvm.ir.Var) -> str:
    return str(buf.ty.dtype)


def buffer_scope(buf: tvm.ir.Var) -> str:
    return str(buf.ty.storage_scope)


def buffer_name(buf: tvm.ir.Var) -> str:
    return str(buf.name)


def full_region(buf: tvm.ir.Var) -> tvm.ir.TensorRegion:
    return tirx.BufferRegion(buf, [tvm.ir.Range.from_min_extent(0, s) for s in buf.ty.shape])


def to_region(x: Any, extents: Sequence[Any] | None = None) -> tvm.ir.TensorRegion:
    """Normalise a buffer, region or element into a region.

    A buffer is its full region. An element ``A[i, j]`` is the corner of a region whose extents are
    ``extents`` aligned to the trailing dimensions (leading dimensions get extent 1); without
    ``extents`` it is the single element.
    """
    if is_region(x):
        return x
    if is_buffer(x):
        return full_region(x)
    if is_load(x):
        idx = list(x.indices)
        ext = [1] * len(idx) if extents is None else list(extents)
        if len(ext) > len(idx):
            raise ValueError(
                f"element {describe(x)} has {len(idx)} indices but the other operand has {len(ext)} dimensions"
            )
        ext = [1] * (len(idx) - len(ext)) + ext
        return tirx.BufferRegion(x.source, [tvm.ir.Range.from_min_extent(i, e) for i, e in zip(idx, ext)])
    raise TypeError(f"expected a buffer, a buffer element or a buffer region, got {describe(x)}")


def region_extents(r: tvm.ir.TensorRegion) -> list[Any]:
    return [analyzer().simplify(rg.extent) for rg in r.region]


def is_one(e: Any) -> bool:
    return (isinstance(e, int) and e == 1) or (isinstance(e, tirx.IntImm) and e.value == 1)


def squeeze(extents: Sequence[Any]) -> list[Any]:
    """Extents without the unit ones."""
    return [e for e in extents if not is_one(e)]


def same_extents(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two extent lists may be equal once their unit extents are dropped."""
    sa, sb = squeeze(a), squeeze(b)
    return len(sa) == len(sb) and not any(provably_different(x, y) for x, y in zip(sa, sb))


def copy_mismatch(src: Any, dst: Any, op: str = "T.copy") -> str | None:
    """Why regions `src` and `dst` cannot be copied element for element (their extents, unit ones aside, provably
    differ), or None."""
    se, de = region_extents(src), region_extents(dst)
    if same_extents(se, de):
        return None
    return (f"{op} shape mismatch: src {describe(src)} has extents {format_extents(se)} but dst {describe(dst)} "
            f"has {format_extents(de)}")


def provably_different(a: Any, b: Any) -> bool:
    """True when two integer expressions can be shown to differ (unknown symbolic values are not)."""
    if isinstance(a, int) and isinstance(b, int):
        return a != b
    try:
        diff = analyzer().simplify(tirx.const(a, "int32") - b if isinstance(a, int) else a - b)
    except Exception:
        return False
    return isinstance(diff, tirx.IntImm) and diff.value != 0


def format_extents(extents: Sequence[Any]) -> str:
    return "(" + ", ".join(str(e) for e in extents) + ("," if len(extents) == 1 else "") + ")"


def describe(x: Any) -> str:
    """A short human description of a DSL value for error messages."""
    if is_buffer(x):
        return f"buffer {buffer_name(x)}{format_extents(buffer_shape(x))} {buffer_dtype(x)} ({buffer_scope(x)})"
    if is_load(x):
        return f"{buffer_name(x.source)}[{', '.join(str(i) for i in x.indices)}]"
    if is_region(x):
        parts = [f"{r.min}:{analyzer().simplify(r.min + r.extent)}" for r in x.region]
        return f"{buffer_name(x.source)}[{', '.join(parts)}]"
    return f"{type(x).__name__} {x!r}" if not isinstance(x, (int, float, str)) else repr(x)
