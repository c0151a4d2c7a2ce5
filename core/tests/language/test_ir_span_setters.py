"""`tilelang.ir.set_stmt_span` / `set_buffer_span` give an existing statement or buffer a source span in place, as
the reference's do: every holder of the node (a sequence, a kernel) sees it, and structural equality ignores it."""

from __future__ import annotations

import pytest
import tvm
from tvm import tirx

from tilelang.ir import get_buffer_span, get_stmt_span, make_span, set_buffer_span, set_stmt_span, span_to_location


def test_a_statement_gets_its_span_where_it_is_already_used():
    buf = tirx.decl_buffer((4,), "int32", name="out")
    store = tirx.BufferStore(buf, tirx.IntImm("int32", 1), [0])
    seq = tirx.SeqStmt([store, tirx.Evaluate(tirx.IntImm("int32", 0))])
    twin = tirx.BufferStore(buf, tirx.IntImm("int32", 1), [0])
    assert get_stmt_span(store) is None or span_to_location(get_stmt_span(store)) is None
    assert set_stmt_span(store, make_span("kernel.py", 21)) is None
    assert span_to_location(get_stmt_span(seq.seq[0])) == ("kernel.py", 21)  # the sequence holds the same node
    assert tvm.ir.structural_equal(store, twin)  # spans take no part in equality


def test_a_buffer_gets_its_span_in_place():
    buf = tirx.decl_buffer((8, 8), "float16", name="A_shared", scope="shared.dyn")
    load = tirx.BufferLoad(buf, [tirx.IntImm("int32", 0), tirx.IntImm("int32", 1)])
    set_buffer_span(buf, make_span("kernel.py", 7))
    assert span_to_location(get_buffer_span(load.source)) == ("kernel.py", 7)


def test_a_node_without_a_span_field_is_a_clear_error():
    with pytest.raises(TypeError, match="set_stmt_span: .* has no span field"):
        set_stmt_span(tvm.runtime.convert([1, 2]), make_span("k.py", 1))  # an Array: no span
