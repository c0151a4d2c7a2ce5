"""The ``c`` kind's vectors: ``T.Parallel`` loops run in 128-bit runs (``float4``, ``half8``...), vectorised loops
wider than 128 bits run serially, and tile ops stay scalar; everything compiles and matches torch."""

from __future__ import annotations

import re

import pytest
import torch

import tilelang
import tilelang.language as T

N = 256


def _binary(dtype: str):
    @T.prim_func
    def binary(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), Add: T.Tensor((N,), dtype),
               Mul: T.Tensor((N,), dtype)):
        for i in T.Parallel(N):
            Add[i] = A[i] + B[i]
        for i in T.Parallel(N):
            Mul[i] = A[i] * B[i]

    return binary


@pytest.mark.parametrize(("dtype", "vector"), [("float32", "float4"), ("float16", "half8"), ("int32", "int32_t4"),
                                              ("bfloat16", "uint16_t8")])
def test_parallel_loops_run_in_128_bit_vectors(dtype: str, vector: str) -> None:
    kernel = tilelang.compile(_binary(dtype), target="c")
    source = kernel.get_kernel_source()
    assert re.search(rf"\*\({vector}\*\)\(Add \+ \(i_o \* \d+\)\) = ", source), source
    torch_dtype = getattr(torch, dtype)
    a = (torch.randn(N) * 8).to(torch_dtype)
    b = (torch.randn(N) * 8).to(torch_dtype)
    add, mul = torch.empty(N, dtype=torch_dtype), torch.empty(N, dtype=torch_dtype)
    kernel(a, b, add, mul)
    # bf16: stored as 16-bit integers, computed in fp32 lanes (cast lane-wise both ways), rounded once
    wide = torch.float32 if dtype == "bfloat16" else torch_dtype
    torch.testing.assert_close(add, (a.to(wide) + b.to(wide)).to(torch_dtype))
    torch.testing.assert_close(mul, (a.to(wide) * b.to(wide)).to(torch_dtype))


def test_odd_extents_stay_scalar() -> None:
    @T.prim_func
    def odd(A: T.Tensor((6,), "float32"), B: T.Tensor((6,), "float32")):
        for i in T.Parallel(6):
            B[i] = A[i] * 2.0

    kernel = tilelang.compile(odd, target="c")
    assert "*(float4*)" not in kernel.get_kernel_source()
    a = torch.randn(6)
    b = torch.empty(6)
    kernel(a, b)
    torch.testing.assert_close(b, a * 2)


def test_vectorized_loops_wider_than_128_bits_run_serially() -> None:
    @T.prim_func
    def wide(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        for i in T.serial(N // 64):
            for j in T.vectorized(64):
                C[i * 64 + j] = A[i * 64 + j] - B[i * 64 + j]

    kernel = tilelang.compile(wide, target="c")
    assert "float64*" not in kernel.get_kernel_source()
    a, b, c = torch.randn(N), torch.randn(N), torch.empty(N)
    kernel(a, b, c)
    torch.testing.assert_close(c, a - b)


def test_reduce_max_stays_scalar_and_correct() -> None:
    @T.prim_func
    def rowmax(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1):
            tile = T.alloc_fragment((8, 64), "float32")
            out = T.alloc_fragment((8,), "float32")
            T.copy(A, tile)
            T.reduce_max(tile, out, dim=1)
            T.copy(out, B)

    kernel = tilelang.compile(rowmax, target="c")
    a = torch.randn(8, 64)
    b = torch.empty(8)
    kernel(a, b)
    torch.testing.assert_close(b, a.amax(dim=1))
