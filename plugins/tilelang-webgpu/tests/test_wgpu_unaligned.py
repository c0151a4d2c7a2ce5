"""WebGPU kernels take tensors of any alignment: the data is copied into GPU buffers, the host pointer never
matters (numpy-backed tensors, offset views, in-place outputs through views), checked against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tilelang
from tilelang.testing import corpus


def _offset_view(shape: tuple[int, ...], offset: int) -> torch.Tensor:
    n = int(np.prod(shape))
    return torch.randn(n + offset)[offset:].view(shape)


def test_backend_asks_no_alignment(wgpu_backend):
    kernel = tilelang.compile(corpus.elementwise_add().func, target="webgpu")
    assert kernel.execution_backend == "wgpu"
    assert wgpu_backend.argument_alignment(kernel.artifact) == [1, 1, 1]


def test_from_numpy_and_offset_views(wgpu_backend):
    kernel = tilelang.compile(corpus.elementwise_add().func, target="webgpu")
    a = torch.from_numpy(np.random.rand(256, 256).astype("float32"))
    b = _offset_view((256, 256), 1)
    base = torch.zeros(256 * 256 + 5)
    c = base[5:].view(256, 256)
    kernel(a, b, c)
    torch.testing.assert_close(c, a + b)
    assert float(base[:5].abs().sum()) == 0.0


@pytest.mark.parametrize("offset", [1, 3])
def test_gemm_with_offset_views(wgpu_backend, offset):
    case = corpus.gemm(M=128, N=128, K=64, block_M=64, block_N=64, block_K=32, dtype="float32")
    kernel = tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu")
    a, b = _offset_view((128, 64), offset), _offset_view((64, 128), offset + 2)
    torch.testing.assert_close(kernel(a, b), a @ b, atol=1e-3, rtol=1e-3)


def test_numpy_backed_offset_view_softmax(wgpu_backend):
    case = corpus.softmax(M=64, N=128, block_M=16)
    kernel = tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu")
    x = torch.from_numpy(np.random.randn(64 * 128 + 1).astype("float32"))[1:].view(64, 128)
    torch.testing.assert_close(kernel(x), torch.softmax(x, 1), atol=1e-5, rtol=1e-4)
