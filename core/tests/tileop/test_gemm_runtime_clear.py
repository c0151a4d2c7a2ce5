"""``clear_accum`` given as a condition known only at run time (``clear_accum=(ko == 0)`` inside the K loop, as
the reference's FlashMLA examples write it): the accumulator is zeroed where the condition holds, on every
backend (it was read as Python's truth value of the comparison object, which is False: C kept its garbage)."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError

pytestmark = pytest.mark.backend("cpu")


def _clear_in_loop(m: int = 64, n: int = 64, k: int = 64, bk: int = 16):
    @T.prim_func
    def main(A: T.Tensor((m, k), "float32"), B: T.Tensor((n, k), "float32"), C: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=64):
            As = T.alloc_shared((m, bk), "float32")
            Bs = T.alloc_shared((n, bk), "float32")
            acc = T.alloc_fragment((m, n), "float32")
            T.fill(acc, 1e6)  # what a missed clear would leave in the result
            for ko in T.serial(k // bk):
                T.copy(A[0, ko * bk], As)
                T.copy(B[0, ko * bk], Bs)
                T.gemm(As, Bs, acc, transpose_B=True, clear_accum=(ko == 0))
            T.copy(acc, C)

    return main


def test_a_runtime_clear_zeroes_the_accumulator_where_it_holds():
    import torch

    kernel = tilelang.compile(_clear_in_loop(), target="cpu")
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.zeros(64, 64)
    kernel(a, b, c)
    torch.testing.assert_close(c, a @ b.T, rtol=1e-4, atol=1e-4)


def test_a_clear_that_is_no_condition_is_refused():
    with pytest.raises(KernelTypeError, match="clear_accum must be a bool or a boolean expression"):
        @T.prim_func
        def bad(A: T.Tensor((16, 16), "float32"), C: T.Tensor((16, 16), "float32")):
            with T.Kernel(1, threads=32):
                acc = T.alloc_fragment((16, 16), "float32")
                T.gemm(A, A, acc, clear_accum=1.5 * A[0, 0])
                T.copy(acc, C)
