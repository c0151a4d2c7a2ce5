"""Eager (@tilelang.jit quickstart form) kernels: T.const, body annotations, T.empty, return."""

from __future__ import annotations

import contextlib

import pytest
import torch
from irwalk import ints

import tilelang.language as T
from tilelang.errors import KernelTypeError
from tilelang.frontend import EagerProgram, TensorArg, is_eager_function, parse_eager
from tilelang.testing.corpus import matmul_relu


def scale_rows(X, factor: float = 2.0, block: int = 16):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    S = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block)) as bx:
        for i, j in T.Parallel(block, N):
            Y[bx * block + i, j] = X[bx * block + i, j] * factor
        for i in T.Parallel(block):
            S[bx * block + i] = 0.0
    return S, Y


def with_scalar(A, n: T.int32):
    (L,) = (T.const("L"),)
    A: T.Tensor((L,), T.float32)
    B = T.empty((L,), T.float32)
    with T.Kernel(1) as _:
        for i in T.serial(L):
            B[i] = A[i] + T.cast(n, T.float32)
    return B


def dynamic_rows(A):
    m = T.dynamic("m")
    A: T.Tensor((m, 8), T.float32)
    B = T.empty((m, 8), T.float32)
    with T.Kernel(T.ceildiv(m, 4)) as bx:
        for i, j in T.Parallel(4, 8):
            if bx * 4 + i < m:
                B[bx * 4 + i, j] = A[bx * 4 + i, j]
    return B


ROWS = T.dynamic("rows")


def signature_annotated(A: T.Tensor((ROWS, 8), T.float32), s: T.float32):
    B = T.empty((ROWS, 8), T.float32)
    with T.Kernel(T.ceildiv(ROWS, 4)) as bx:
        for i, j in T.Parallel(4, 8):
            if bx * 4 + i < ROWS:
                B[bx * 4 + i, j] = A[bx * 4 + i, j] * s
    return B


def test_tensor_annotations_in_the_signature_declare_the_parameter():
    """``def f(A: T.Tensor(...))`` is ``A: T.Tensor(...)`` atop the body (issue 30: it was read as a torch tensor)."""
    k = parse_eager(signature_annotated, torch.zeros(12, 8), 2.0)
    assert k.inputs == ["A", "s"] and [str(p.name) for p in k.func.params] == ["A", "s", "B"]
    assert k.func.params[0].ty.shape[0].same_as(k.func.params[2].ty.shape[0])
    with pytest.raises(KernelTypeError, match="argument 'A' must have shape"):
        parse_eager(signature_annotated, torch.zeros(12, 4), 2.0)


def test_quickstart_specialised_per_shape():
    a, b = torch.zeros(256, 128, dtype=torch.float16), torch.zeros(128, 64, dtype=torch.float16)
    k = parse_eager(matmul_relu, a, b)
    assert k.consts == {"M": 256, "N": 64, "K": 128}
    assert k.inputs == ["A", "B"] and k.out_idx == [2] and k.outputs == [((256, 64), "float16")]
    A, B, C = k.func.params
    assert ints(A.ty.shape) == [256, 128] and ints(B.ty.shape) == [128, 64] and ints(C.ty.shape) == [256, 64]
    assert k.func.attrs["global_symbol"] == "matmul_relu"
    assert "T.tl.gemm(" in k.func.script()
    k2 = parse_eager(matmul_relu, TensorArg((512, 128), "float16"), TensorArg((128, 64), "float16"), block_M=64)
    assert ints(k2.func.params[2].ty.shape) == [512, 64]


def test_consts_by_keyword_without_tensors():
    k = parse_eager(matmul_relu, M=128, N=128, K=64)
    assert ints(k.func.params[0].ty.shape) == [128, 64] and k.consts == {"M": 128, "N": 128, "K": 64}


def test_multiple_outputs_scalar_param_and_key():
    x = torch.zeros(32, 8)
    k = parse_eager(scale_rows, x, factor=3.0)
    assert k.inputs == ["X"] and k.out_idx == [2, 1]  # return order S, Y; allocation order Y, S
    assert k.outputs == [((32,), "float32"), ((32, 8), "float32")]
    prog = EagerProgram(scale_rows)
    assert prog.key(x) == prog.key(torch.ones(32, 8)) != prog.key(torch.zeros(64, 8))
    assert prog.key(x, factor=3.0) != prog.key(x)
    ks = parse_eager(with_scalar, torch.zeros(10), 5)
    assert ks.inputs == ["A", "n"] and [str(p.name) for p in ks.func.params] == ["A", "n", "B"]
    assert str(ks.func.params[1].ty.dtype) == "int32"


def test_dynamic_dims_stay_symbolic():
    k = parse_eager(dynamic_rows, torch.zeros(10, 8))
    a, b = k.func.params
    assert not isinstance(a.ty.shape[0], int) and a.ty.shape[0].same_as(b.ty.shape[0])
    assert k.outputs[0][0][1] == 8


def test_argument_mismatch_is_reported_at_the_annotation():
    with pytest.raises(KernelTypeError) as err:
        parse_eager(matmul_relu, torch.zeros(64, 32, dtype=torch.float16), torch.zeros(16, 64, dtype=torch.float16))
    assert "argument 'B'" in str(err.value) and "corpus.py:" in str(err.value)
    with pytest.raises(KernelTypeError, match="dtype float16"):
        parse_eager(matmul_relu, torch.zeros(64, 32), torch.zeros(32, 64))


def test_is_eager_function():
    def lazy_factory(M):
        @T.prim_func
        def main(A: T.Tensor((M,), T.float32)):
            with T.Kernel(1) as _:
                A[0] = 0.0

        return main

    def factory_in_with(M):  # a factory whose first statement is a `with` (issue 30)
        with contextlib.nullcontext():
            @T.prim_func
            def main(A: T.Tensor((M,), T.float32)):
                with T.Kernel(1) as _:
                    A[0] = 0.0

        return main

    def factory_calling_in_with(M):
        with contextlib.nullcontext():
            prim = lazy_factory(M)
        return prim

    def factory_with_branches(M, zero: bool):
        if zero:
            @T.prim_func
            def main(A: T.Tensor((M,), T.float32)):
                with T.Kernel(1) as _:
                    A[0] = 0.0
        else:
            @T.prim_func
            def main(A: T.Tensor((M,), T.float32)):
                with T.Kernel(1) as _:
                    A[0] = 1.0
        return main

    def eager_in_place(A):
        A: T.Tensor((16,), T.float32)
        for i in T.serial(16):
            A[i] = 0.0

    def eager_nested_with(A):
        with contextlib.nullcontext(), T.Kernel(1) as _:
            A[0] = 0.0

    assert is_eager_function(matmul_relu) and is_eager_function(dynamic_rows)
    assert is_eager_function(eager_in_place) and is_eager_function(eager_nested_with)
    assert not is_eager_function(lazy_factory)
    for factory in (factory_in_with, factory_calling_in_with, factory_with_branches):
        assert not is_eager_function(factory), factory.__name__
