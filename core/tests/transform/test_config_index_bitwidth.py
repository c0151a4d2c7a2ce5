"""ConfigIndexBitwidth (target-neutral): which buffers get 64-bit offsets and how their indices are widened."""

from __future__ import annotations

from typing import Any

import tvm
from transform_helpers import as_module
from tvm import tirx

import tilelang.language as T
from tilelang.transform import utils as C
from tilelang.transform.config_index_bitwidth import ConfigIndexBitwidth, max_elements, widen


def copy2d(M: Any, N: Any) -> Any:
    @T.prim_func
    def copy2d(A: T.Tensor((M, N), "int8"), B: T.Tensor((M, N), "int8")):
        for i, j in T.grid(M, N):
            B[i, j] = A[i, j]

    return copy2d


def copy1d(n: int) -> Any:
    @T.prim_func
    def copy1d(A: T.Tensor((n,), "int8"), B: T.Tensor((n,), "int8")):
        for i, j in T.grid(n // 1024, 1024):
            B[i * 1024 + j] = A[i * 1024 + j]

    return copy1d


def _run(func: Any) -> Any:
    return ConfigIndexBitwidth()(as_module(func))["main"]


def _index_dtypes(func: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for ld in C.collect(func.body, tvm.ir.TensorLoad):
        out.setdefault(str(ld.source.name), set()).update(str(i.ty.dtype) for i in ld.indices)
    for st in C.collect(func.body, tirx.BufferStore):
        out.setdefault(str(st.buffer.name), set()).update(str(i.ty.dtype) for i in st.indices)
    return out


def test_small_static_buffers_are_left_alone() -> None:
    func = copy2d(1024, 1024)
    out = _run(func)
    assert _index_dtypes(out) == {"A": {"int32"}, "B": {"int32"}}
    assert [str(s.ty.dtype) for s in out.params[0].ty.shape] == ["int32", "int32"]


def test_a_static_buffer_past_int32_gets_int64_extents_and_indices() -> None:
    out = _run(copy2d(65538, 32768))
    assert _index_dtypes(out) == {"A": {"int64"}, "B": {"int64"}}
    a = out.params[0]
    assert [str(s.ty.dtype) for s in a.ty.shape] == ["int64", "int64"]


def test_dynamic_rows_get_int64_indices() -> None:
    out = _run(copy2d(T.dynamic("m"), 32768))
    assert _index_dtypes(out) == {"A": {"int64"}, "B": {"int64"}}
    assert max_elements(out.params[0]) == (2**31 - 1) * 32768


def test_a_dimension_past_int32_is_widened_operand_by_operand() -> None:
    out = _run(copy1d(2**32))
    (load,) = C.collect(out.body, tvm.ir.TensorLoad)
    index = load.indices[0]
    # i * 1024 + j in int64: an int32 product would wrap before a cast of the whole sum
    assert isinstance(index, tirx.Add) and isinstance(index.a, tirx.Mul) and str(index.a.ty.dtype) == "int64"
    assert isinstance(index.a.a, tirx.Cast) and str(index.a.b.ty.dtype) == "int64"


def test_widen_keeps_wide_and_non_integer_expressions() -> None:
    x = tirx.Var("x", "int64")
    assert widen(x).same_as(x)
    y = tirx.Var("y", "int32")
    w = widen(tirx.Mul(y, tirx.IntImm("int32", 3)))
    assert isinstance(w, tirx.Mul) and str(w.ty.dtype) == "int64" and isinstance(w.a, tirx.Cast)
