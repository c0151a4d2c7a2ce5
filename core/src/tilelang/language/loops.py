"""Loops: ``T.Parallel``, ``T.Pipelined``, ``T.serial``, ``T.unroll``, ``T.vectorized``, ``T.grid`` (and ``range``).

Each returns a `Loop` description; the front end's ``for`` turns it into nested ``tirx.For`` frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tilelang.errors import KernelTypeError

PARALLEL_ANN = "tl.parallel"
STAGES_ANN = "tl.pipeline_stages"
ORDER_ANN = "tl.pipeline_order"
STAGE_ANN = "tl.pipeline_stage"


@dataclass
class Loop:
    """Nested loops: one ``(start, stop, step)`` per level, all of one kind, each with `annotations`."""

    ranges: list[tuple[Any, Any, Any]]
    kind: str  # "serial" | "parallel" | "unroll" | "vectorized"
    annotations: dict[str, Any] = field(default_factory=dict)

    def __iter__(self):
        raise KernelTypeError("T loops can only be iterated by a `for` statement inside a kernel")


def _check(value: Any, what: str) -> Any:
    import tvm

    if isinstance(value, bool) or not (isinstance(value, int) or (
            isinstance(value, tvm.ir.Expr) and tvm.ir.is_prim_expr(value)
            and str(value.ty.dtype).startswith(("int", "uint")))):
        raise KernelTypeError(f"{what} must be an integer or an integer expression, got {value!r}")
    return value


def _range(start: Any, stop: Any, step: Any, what: str) -> tuple[Any, Any, Any]:
    if stop is None:
        start, stop = 0, start
    if step is not None:
        _check(step, f"{what} step")
        if isinstance(step, int) and step == 0:
            raise KernelTypeError(f"{what} step must not be 0")
        if isinstance(step, int) and step == 1:
            step = None
    return _check(start, f"{what} start"), _check(stop, f"{what} extent"), step


def serial(start: Any, stop: Any = None, step: Any = None, *, annotations: dict | None = None) -> Loop:
    """A sequential loop (``range`` inside a kernel means the same)."""
    return Loop([_range(start, stop, step, "T.serial")], "serial", dict(annotations or {}))


def unroll(start: Any, stop: Any = None, step: Any = None, *, explicit: bool = False,
           annotations: dict | None = None) -> Loop:
    """A loop the compiler unrolls. ``explicit=True`` (the ``pragma_unroll_explicit`` annotation) copies the body
    out for every iteration, whatever its size; otherwise a loop whose trip count is not a constant, or that would
    grow past `tilelang.transform.unroll_budget.UNROLL_BUDGET` statements, is left to the device compiler."""
    from tilelang.transform.unroll_budget import EXPLICIT_ANN, USER_ANN

    annotations = dict(annotations or {})
    if explicit:
        annotations[EXPLICIT_ANN] = True
    annotations.setdefault(USER_ANN, 1)
    return Loop([_range(start, stop, step, "T.unroll")], "unroll", annotations)


def vectorized(start: Any, stop: Any = None, *, annotations: dict | None = None) -> Loop:
    """A loop turned into vector instructions."""
    return Loop([_range(start, stop, None, "T.vectorized")], "vectorized", dict(annotations or {}))


def grid(*extents: Any) -> Loop:
    """``for i, j, k in T.grid(a, b, c)``: nested sequential loops."""
    if not extents:
        raise KernelTypeError("T.grid needs at least one extent")
    return Loop([_range(e, None, None, "T.grid") for e in extents], "serial")


def Parallel(*extents: Any, coalesced_width: int | None = None, loop_layout: Any = None) -> Loop:
    """``for i, j in T.Parallel(M, N)``: element-wise tile loops distributed over the block's threads."""
    if not extents:
        raise KernelTypeError("T.Parallel needs at least one extent")
    return Loop([_range(e, None, None, "T.Parallel") for e in extents], "parallel", {PARALLEL_ANN: 1})


def _int_list(value: Sequence[Any] | None, what: str) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise KernelTypeError(f"T.Pipelined {what} must be a list of ints, got {value!r}")
    return list(value)


def Pipelined(start: Any, stop: Any = None, num_stages: int = 0, order: Sequence[int] | None = None,
              stage: Sequence[int] | None = None, sync: Any = None, group: Any = None) -> Loop:
    """A sequential loop whose body the compiler software-pipelines over `num_stages` stages."""
    if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 0:
        raise KernelTypeError(f"T.Pipelined num_stages must be a non-negative int, got {num_stages!r}")
    ann: dict[str, Any] = {STAGES_ANN: num_stages}
    order_l, stage_l = _int_list(order, "order"), _int_list(stage, "stage")
    if order_l is not None:
        ann[ORDER_ANN] = order_l
    if stage_l is not None:
        ann[STAGE_ANN] = stage_l
    if order_l is not None and stage_l is not None and len(order_l) != len(stage_l):
        raise KernelTypeError("T.Pipelined order and stage must have the same length")
    return Loop([_range(start, stop, None, "T.Pipelined")], "serial", ann)
