"""``T.gemm`` with its accumulator C in shared memory (the reference accepts it): a backend gemm that needs a
fragment C declines it and core's generic lowering computes it."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError

pytestmark = pytest.mark.backend("cpu")


def _shared_c_gemm(m: int = 64, n: int = 64, k: int = 64, bm: int = 32, bn: int = 32, bk: int = 16):
    @T.prim_func
    def main(A: T.Tensor((m, k), "float32"), B: T.Tensor((k, n), "float32"), C: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=64) as (bx, by):
            As = T.alloc_shared((bm, bk), "float32")
            Bs = T.alloc_shared((bk, bn), "float32")
            Cs = T.alloc_shared((bm, bn), "float32")
            T.clear(Cs)
            for ko in T.serial(T.ceildiv(k, bk)):
                T.copy(A[by * bm, ko * bk], As)
                T.copy(B[ko * bk, bx * bn], Bs)
                T.gemm(As, Bs, Cs)
            T.copy(Cs, C[by * bm, bx * bn])

    return main


def test_gemm_accumulates_into_a_shared_tile():
    import torch

    kernel = tilelang.compile(_shared_c_gemm(), target="cpu")
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.zeros(64, 64)
    kernel(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_global_operands_and_accumulator_use_the_generic_lowering():
    """As in the reference, T.gemm may read and write global slices; backends without a path for them (the CPU's
    micro-kernel wants tiles) leave the call to core's generic lowering."""
    import torch

    @T.prim_func
    def direct(A: T.Tensor((64, 32), "float32"), B: T.Tensor((32, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2) as bx:
            T.gemm(A[bx * 32:(bx + 1) * 32, :], B, C[bx * 32:(bx + 1) * 32, :], clear_accum=True)

    kernel = tilelang.compile(direct, target="cpu")
    a, b, c = torch.randn(64, 32), torch.randn(32, 64), torch.full((64, 64), 7.0)
    kernel(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_an_accumulator_in_a_scalar_variable_is_refused():
    def bad(A: T.Tensor((64, 32), "float16")):
        with T.Kernel(1) as _:
            Bs = T.alloc_shared((32, 32), "float16")
            v = T.alloc_var("float32")
            T.gemm(Bs, Bs, v)

    with pytest.raises(KernelTypeError, match="C is buffer v.*local.var.*scope"):
        T.prim_func(bad)
