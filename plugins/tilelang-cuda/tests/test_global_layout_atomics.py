"""A global tensor with a layout (``T.annotate_layout`` on a kernel argument) updated by element atomics: the
reference's GQA / MHA backward examples accumulate dQ so, in the order of the 8x8 MMA fragment, and a second kernel
copies it back out through the same layout. Executed by the SIMT emulator against torch."""

from __future__ import annotations

import pytest
import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

L, D = 16, 16
TARGET = {"kind": "cuda", "arch": "sm_90a"}


def dq_layout(X):
    """The examples' ``make_dq_layout`` over (seq, dim)."""
    return T.Layout(X.shape, lambda s, d: [s // 8, d // 8, d % 2, 4 * (s % 8) + (d % 8) // 2])


def stored_position(s: int, d: int) -> int:
    """Where `dq_layout` stores element (s, d) of a row-major (2, 2, 2, 32) array."""
    a, b, c, e = s // 8, d // 8, d % 2, 4 * (s % 8) + (d % 8) // 2
    return ((a * 2 + b) * 2 + c) * 32 + e


@T.prim_func
def accumulate(A: T.Tensor((L, D), "float32"), X: T.Tensor((L, D), "float32")):
    with T.Kernel(3, threads=64) as bx:
        T.annotate_layout({X: dq_layout(X)})
        f = T.alloc_fragment((L, D), "float32")
        T.copy(A, f)
        for i, j in T.Parallel(L, D):
            T.atomic_add(X[i, j], f[i, j] * (bx + 1))


@T.prim_func
def read_back(X: T.Tensor((L, D), "float32"), Y: T.Tensor((L, D), "float32")):
    with T.Kernel(1, threads=64):
        T.annotate_layout({X: dq_layout(X)})
        T.copy(X, Y)


def test_element_atomics_update_the_elements_where_the_layout_stores_them():
    art = tilelang.lower(accumulate, target=TARGET)
    assert "atomicAdd" in art.kernel_source
    torch.manual_seed(0)
    a, x = torch.randn(L, D), torch.zeros(L, D)
    emulate(art, a, x)  # three blocks add 1a, 2a, 3a
    expected = torch.empty(L * D)
    for i in range(L):
        for j in range(D):
            expected[stored_position(i, j)] = 6.0 * a[i, j]
    torch.testing.assert_close(x.flatten(), expected, rtol=1e-5, atol=1e-5)
    y = torch.empty(L, D)
    emulate(tilelang.lower(read_back, target=TARGET), x, y)
    torch.testing.assert_close(y, 6.0 * a, rtol=1e-5, atol=1e-5)


def test_any_other_address_of_a_laid_out_tensor_is_refused():
    @T.prim_func
    def pointer(X: T.Tensor((L, D), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({X: dq_layout(X)})
            T.evaluate(T.call_extern("handle", "consume_rows", T.address_of(X[0, 0])))

    with pytest.raises(LoweringError, match="tensor X has a layout but an operation here reads it through its"):
        tilelang.lower(pointer, target=TARGET)
