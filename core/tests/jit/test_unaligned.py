"""Tensors of any alignment run: numpy-backed tensors and offset views on DSL kernels compiled for the CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tilelang
from tilelang.testing import corpus

pytestmark = pytest.mark.backend("llvm")


def _offset_view(shape: tuple[int, ...], offset: int = 1, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A contiguous view starting `offset` elements into a fresh buffer (element-aligned, not 64-byte aligned)."""
    n = int(np.prod(shape))
    return torch.randn(n + offset).to(dtype)[offset:].view(shape)


def test_cpu_kernels_take_misaligned_tensors_zero_copy():
    """CPU code assumes element alignment only (the pipeline re-declares the parameters): no copy is made."""
    case = corpus.elementwise_add()
    kernel = tilelang.compile(case.func, target="cpu")
    assert set(kernel.artifact.metadata["param_align"].values()) == {4}
    a = torch.from_numpy(np.random.rand(256, 256).astype("float32"))
    b = _offset_view((256, 256))
    base = torch.zeros(256 * 256 + 3)
    c = base[3:].view(256, 256)
    kernel(a, b, c)  # C is written in place through the misaligned view
    torch.testing.assert_close(c, a + b)
    assert float(base[:3].abs().sum()) == 0.0


@pytest.mark.parametrize("offset", [1, 3, 4, 13])
def test_cpu_gemm_with_offset_views(offset):
    case = corpus.gemm(M=128, N=128, K=64, block_M=64, block_N=64, block_K=32, dtype="float32")
    kernel = tilelang.compile(case.func, out_idx=case.out_idx, target="cpu")
    a, b = _offset_view((128, 64), offset), _offset_view((64, 128), offset + 1)
    assert a.data_ptr() % 64 and b.data_ptr() % 64
    torch.testing.assert_close(kernel(a, b), a @ b, atol=1e-3, rtol=1e-3)


def test_cpu_numpy_backed_offset_view_reduction():
    case = corpus.row_reduce("sum", M=64, N=128, block_M=16, dtype="float32")
    kernel = tilelang.compile(case.func, out_idx=case.out_idx, target="cpu")
    x = torch.from_numpy(np.random.rand(64 * 128 + 1).astype("float32"))[1:].view(64, 128)
    torch.testing.assert_close(kernel(x), x.sum(1), atol=1e-4, rtol=1e-4)


def test_kernel_declaring_64_byte_alignment_gets_aligned_copies():
    """A program declaring 64-byte aligned parameters for a device target keeps the declaration; on the CPU
    path a hand-declared 64-byte kernel (core's jit artifacts) runs on copies: see test_arguments.py."""
    from tilelang.engine.request import CompileRequest

    prim = corpus.elementwise_add().func
    assert set(CompileRequest.create({"kind": "cuda", "arch": "sm_80"}).param_align(prim).values()) == {64}
    assert set(CompileRequest.create({"kind": "llvm"}).param_align(prim).values()) == {4}
