"""T.if_then_else with branches of different dtypes: promoted as the reference (TVM's binary-operator rule)."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T

pytestmark = pytest.mark.backend("llvm")


def test_int_and_float_branches_meet_as_float():
    """The examples' ``T.if_then_else(allowed > 0, 0, float("-inf"))``: 0 is an int32, -inf a float32 literal."""

    @T.prim_func
    def mask(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32), C: T.Tensor((64,), T.int64)):
        with T.Kernel(1, is_cpu=True) as _:
            for i in T.serial(64):
                B[i] = T.if_then_else(A[i] > 0, 0, float("-inf"))
                C[i] = T.if_then_else(A[i] > 0, T.int32(1), T.int64(-2))

    kernel = tilelang.compile(mask, out_idx=[1, 2], target="cpu")
    a = torch.randn(64)
    b, c = kernel(a)
    torch.testing.assert_close(b, torch.where(a > 0, 0.0, float("-inf")))
    torch.testing.assert_close(c, torch.where(a > 0, 1, -2).to(torch.int64))


def test_branches_without_a_common_dtype_are_a_kernel_type_error():
    from tvm import tirx

    from tilelang.errors import KernelTypeError
    from tilelang.language.exprs import if_then_else

    with pytest.raises(KernelTypeError, match="no common dtype"):
        if_then_else(tirx.Var("c", "bool"), tirx.Var("p", "handle"), tirx.const(1.0, "float32"))
