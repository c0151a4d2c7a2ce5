"""Source spans on the tile IR: which line of the user's kernel produced a statement or a buffer.

The front end stamps every statement it builds with the span of the Python statement that produced it
(``TILELANG_ENABLE_IR_SPAN=0`` turns this off); a statement built inside a macro carries the macro call's span
and its own (a ``SequentialSpan``, innermost last). Spans never take part in structural equality or hashing,
and passes that rebuild a node may drop them. IR nodes are immutable in apache-tvm 0.27: a span is given when a
node is built.
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


def set_stmt_span(stmt: Any, span: Any) -> Any:
    """Not available: apache-tvm 0.27 statements are immutable and take their span only when built.

    Build the statement under ``IRBuilder.with_source_span(span)`` (what the front end does) instead.
    """
    raise NotImplementedError("apache-tvm 0.27 statements are immutable: a span is given when the statement is built "
                              "(tvm.script.ir_builder.IRBuilder.with_source_span), it cannot be set afterwards")


def set_buffer_span(buf: Any, span: Any) -> Any:
    """A buffer like `buf` with `span` (a new Var: substitute it where `buf` is used)."""
    t = buf.ty
    return tirx.decl_buffer(list(t.shape), str(t.dtype), name=str(buf.name), scope=str(t.storage_scope),
                            strides=list(t.strides) or None, span=span)


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
