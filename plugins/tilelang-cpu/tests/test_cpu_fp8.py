"""fp8 tensors on the CPU: LLVM has no fp8 arithmetic; TVM's FP8ComputeLegalize computes in fp32 and
FP8StorageLegalize stores bytes, rounding where a value is stored to an fp8 tensor."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T

M, N = 8, 32


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2], ids=["e4m3fn", "e5m2"])
def test_fp8_stores_and_loads_match_torch(dtype):
    """fp32 -> fp8 rounding on a store to an fp8 tensor (the reference's per-token fp8 cast example), and fp8
    loads as operands of fp32 arithmetic. Both failed to lower for LLVM (an fp8 value stored to a byte buffer)."""
    fp8 = str(dtype).removeprefix("torch.")

    @T.prim_func
    def quantize(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), fp8)):
        with T.Kernel(1, threads=32):
            f = T.alloc_fragment((M, N), "float32")
            g = T.alloc_fragment((M, N), fp8)
            T.copy(X, f)
            T.copy(f, g)
            T.copy(g, Y)

    @T.prim_func
    def dequantize(Y: T.Tensor((M, N), fp8), Z: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32):
            g = T.alloc_shared((M, N), fp8)
            T.copy(Y, g)
            for i, j in T.Parallel(M, N):
                Z[i, j] = T.cast(g[i, j], "float32") * 2.0 + 1.0

    x = torch.randn(M, N) * 50
    y = torch.empty(M, N, dtype=dtype)
    tilelang.compile(quantize, target="cpu")(x, y)
    assert torch.equal(y.view(torch.uint8), x.to(dtype).view(torch.uint8))
    z = torch.empty(M, N)
    tilelang.compile(dequantize, target="cpu")(y, z)
    torch.testing.assert_close(z, y.float() * 2 + 1)


def test_float8_e4m3_parameters_take_torch_float8_e4m3fn():
    """``T.float8_e4m3`` is ``float8_e4m3fn`` on the CPU (the reference's deepseek_v4 act_quant): the JIT's own
    output tensor (``torch.float8_e4m3fn``) failed the argument's dtype check."""

    @tilelang.jit(out_idx=[1], target="cpu")
    def quantize():
        @T.prim_func
        def kernel(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), T.float8_e4m3)):
            with T.Kernel(1, threads=32):
                for i, j in T.Parallel(M, N):
                    Y[i, j] = T.clamp(X[i, j], -448.0, 448.0)

        return kernel

    x = torch.randn(M, N) * 50
    y = quantize()(x)
    assert y.dtype == torch.float8_e4m3fn
    assert torch.equal(y.view(torch.uint8), x.to(torch.float8_e4m3fn).view(torch.uint8))


@pytest.mark.parametrize("dtype", [torch.float8_e4m3fn, torch.float8_e5m2], ids=["e4m3fn", "e5m2"])
def test_fp8_stores_round_subnormals_and_overflow_as_torch(dtype):
    """Every float32 -> fp8 store gives torch's byte: subnormals (TVM's encoding flushed e4m3 values under 2**-6
    to 0, the reference's deepseek_v4 act_quant), overflow (e4m3fn saturates to 448, e5m2 is infinity), NaN."""
    fp8 = str(dtype).removeprefix("torch.")
    n = 4096

    @T.prim_func
    def store(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), fp8)):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(n):
                Y[i] = X[i]

    torch.manual_seed(0)
    x = torch.cat([torch.randn(1024) * 2.0**-8, torch.randn(1024) * 2.0**-15, torch.randn(1024) * 300,
                   torch.randn(1024)])
    x[:6] = torch.tensor([float("nan"), float("inf"), -float("inf"), 500.0, -1e6, 2.0**-9 * 2.5])
    y = torch.empty(n, dtype=dtype)
    tilelang.compile(store, target="cpu")(x, y)
    assert torch.equal(y.view(torch.uint8), x.to(dtype).view(torch.uint8))
