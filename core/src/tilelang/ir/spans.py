"""Source spans on the tile IR: which line of the user's kernel produced a statement or a buffer.

The front end stamps every statement it builds with the span of the Python statement that produced it
(``TILELANG_ENABLE_IR_SPAN=0`` turns this off); a statement built inside a macro carries the macro call's span
and its own (a ``SequentialSpan``, innermost last). Spans never take part in structural equality or hashing,
and passes that rebuild a node may drop them. apache-tvm 0.27 gives a node its span when the node is built;
`set_stmt_span` / `set_buffer_span` set it afterwards in place, as the reference's do (every holder of the node
sees the new span), through the field setter tvm-ffi reflects for the ``span`` field.
"""

from __future__ import annotations

import os
from typing import Any

from tilelang.ir._lazy_tvm import tirx, tvm

ENV = "TILELANG_ENABLE_IR_SPAN"


def spans_enabled() -> bool:
    """Whether the front end stamps spans (``TILELANG_ENABLE_IR_SPAN``, default on)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def make_span(filename: str, line: int, col: int = 0, end_line: int | None = None, end_col: int | None = None) -> Any:
    """A ``tvm.ir.Span`` of `filename` at `line` (1-based) and column `col`."""
    return tvm.ir.Span(tvm.ir.SourceName(str(filename)), int(line), int(end_line if end_line is not None else line),
                       int(col), int(end_col if end_col is not None else col))


def _innermost(span: Any) -> Any:
    if span is None:
        return None
    spans = getattr(span, "spans", None)
    if spans is not None:  # SequentialSpan: the innermost scope is the last one
        items = list(spans)
        return _innermost(items[-1]) if items else None
    return span


def span_to_location(span: Any) -> tuple[str, int] | None:
    """``(filename, line)`` of `span` (the innermost one of a SequentialSpan), or None."""
    span = _innermost(span)
    if span is None or span.source_name is None:
        return None
    return str(span.source_name.name), int(span.line)


def get_stmt_span(stmt: Any) -> Any:
    """The span of a statement (None when it has none)."""
    return getattr(stmt, "span", None)


def get_buffer_span(buf: Any) -> Any:
    """The span of a buffer (its declaration or allocation line), or None."""
    return getattr(buf, "span", None)


def _span_field_setter(node: Any) -> Any:
    """tvm-ffi's setter of `node`'s ``span`` field (declared on a base class: ``tirx.Stmt``, ``ir.Var``), or None."""
    info = getattr(type(node), "__tvm_ffi_type_info__", None)
    while info is not None:
        for field in info.fields:
            if field.name == "span":
                return field.setter
        info = info.parent_type_info
    return None


def _set_span(node: Any, span: Any, what: str) -> None:
    setter = _span_field_setter(node)
    if setter is None:
        raise TypeError(f"{what}: {type(node).__name__} has no span field")
    setter(node, span)


def set_stmt_span(stmt: Any, span: Any) -> None:
    """Give statement `stmt` the span `span`, in place (the same statement object everywhere it is used)."""
    _set_span(stmt, span, "set_stmt_span")


def set_buffer_span(buf: Any, span: Any) -> None:
    """Give buffer `buf` (its declaration, as `get_buffer_span` reads it) the span `span`, in place."""
    _set_span(buf, span, "set_buffer_span")


def span_coverage(func: Any) -> dict[str, list[int]]:
    """How much of `func` carries spans: ``{"stmts": [with span, total], "buffers": [with span, total]}``
    (sequences and other assembly-only statements are not counted; buffers are the parameters and the
    allocations)."""
    import tvm_ffi

    stmts = [0, 0]
    buffers = [0, 0]

    def on_stmt(s: Any) -> None:
        if isinstance(s, tirx.SeqStmt):
            return
        stmts[1] += 1
        stmts[0] += get_stmt_span(s) is not None
        if isinstance(s, tirx.AllocBuffer):
            buffers[1] += 1
            buffers[0] += get_buffer_span(s.buffer) is not None

    tvm_ffi.structural_walk(func.body, [(tirx.Stmt, on_stmt)])
    for p in func.params:
        if tirx.is_buffer_var(p):
            buffers[1] += 1
            buffers[0] += get_buffer_span(p) is not None
    return {"stmts": stmts, "buffers": buffers}
