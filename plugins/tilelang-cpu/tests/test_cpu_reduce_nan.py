"""NaN in reductions on the CPU: a row holding a NaN reduces to NaN under max / min / absmax / sum, as in torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tilelang
import tilelang.language as T

M, N = 6, 64
KINDS = ("max", "min", "absmax", "sum")


def _rows(dtype: torch.dtype) -> torch.Tensor:
    """Rows with a NaN first, in the middle, last; a row of NaN; +-inf with a NaN; and a clean row."""
    a = torch.randn(M, N).to(dtype)
    nan, inf = float("nan"), float("inf")
    a[0, 0] = nan
    a[1, 37] = nan
    a[2, N - 1] = nan
    a[3, :] = nan
    a[4, 3], a[4, 9], a[4, 50] = inf, -inf, nan
    return a


def _reference(a: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "max":
        return a.amax(dim=1)
    if kind == "min":
        return a.amin(dim=1)
    if kind == "absmax":
        return a.abs().amax(dim=1)
    return a.float().sum(dim=1).to(a.dtype)


def _kernel(dtype: str, threads: int | None) -> Any:
    """All four reductions of one ``M x N`` tile: ``B[k, i]`` is reduction ``KINDS[k]`` of row ``i``."""

    @T.prim_func
    def rowreduce(A: T.Tensor((M, N), dtype), B: T.Tensor((4, M), dtype)):
        with T.Kernel(1, threads=threads):
            tile = T.alloc_fragment((M, N), dtype)
            mx = T.alloc_fragment((M,), dtype)
            mn = T.alloc_fragment((M,), dtype)
            amx = T.alloc_fragment((M,), dtype)
            sm = T.alloc_fragment((M,), dtype)
            T.copy(A, tile)
            T.reduce_max(tile, mx, dim=1)
            T.reduce_min(tile, mn, dim=1)
            T.reduce_absmax(tile, amx, dim=1)
            T.reduce_sum(tile, sm, dim=1)
            T.copy(mx, B[0, :])
            T.copy(mn, B[1, :])
            T.copy(amx, B[2, :])
            T.copy(sm, B[3, :])

    return rowreduce


def _check(kernel: Any, dtype: torch.dtype) -> None:
    a = _rows(dtype)
    b = torch.zeros(4, M, dtype=dtype)
    kernel(a, b)
    for k, kind in enumerate(KINDS):
        ref = _reference(a, kind)
        assert torch.equal(b[k].isnan(), ref.isnan()), (kind, b[k], ref)
        tol = 1e-2 if dtype == torch.float16 else 1e-5
        torch.testing.assert_close(b[k], ref, equal_nan=True, atol=tol * N, rtol=tol, msg=kind)


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nan_rows_reduce_like_torch(target: str, dtype: str) -> None:
    _check(tilelang.compile(_kernel(dtype, threads=1), target=target), getattr(torch, dtype))


def test_nan_rows_reduce_like_torch_on_vector_partials(tile_op_choices: Any) -> None:
    """The vectorised partial-results reduction (no threads, llvm, float32) also keeps the NaN."""
    chosen = tile_op_choices("tl.reduce")
    kernel = tilelang.compile(_kernel("float32", threads=None), target="llvm")
    assert chosen and set(chosen) == {"cpu_vector_partials"}
    _check(kernel, torch.float32)


def test_integer_max_min_keep_the_plain_max() -> None:
    """The NaN test is for floats: an int32 max is still a plain ``Max``."""
    from tvm import tirx

    from tilelang.tileop.reduce import combine

    acc, x = tirx.Var("acc", "int32"), tirx.Var("x", "int32")
    assert isinstance(combine("max", acc, x), tirx.Max)
    assert isinstance(combine("min", acc, x), tirx.Min)
    assert isinstance(combine("max", tirx.Var("f", "float32"), tirx.Var("g", "float32")), tirx.Select)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_cummax_keeps_nan_from_where_it_appears_like_torch(target: str) -> None:
    @T.prim_func
    def running_max(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=8):
            T.cummax(A, B, dim=1)

    a, b = _rows(torch.float32), torch.zeros(M, N)
    tilelang.compile(running_max, target=target)(a, b)
    torch.testing.assert_close(b, torch.cummax(a, dim=1).values, equal_nan=True)
