"""Execution on a real GPU through the CUDA driver backend (skipped without one)."""

from __future__ import annotations

import pytest
from cuda_helpers import CPU_FORMS

from tilelang.testing import corpus

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", [n for n in sorted(corpus.CORPUS) if n not in CPU_FORMS])
def test_corpus_matches_torch_on_the_gpu(name):
    import torch

    import tilelang

    kernel = corpus.CORPUS[name]()
    jit = tilelang.compile(kernel.prim_func(), target="cuda")
    assert jit.execution_backend == "cuda_driver"
    inputs = kernel.make_inputs(device="cuda")
    outputs = kernel.make_outputs(device="cuda")  # zero-filled: atomics accumulate into them
    jit(*kernel.call_args(inputs, outputs))
    got = outputs
    want = kernel.ref(*[t.cpu() if hasattr(t, "cpu") else t for t in inputs])
    got = got if isinstance(got, (list, tuple)) else [got]
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu().float(), w.float(), atol=kernel.atol, rtol=kernel.rtol)


def test_exports_on_the_gpu():
    import tilelang

    kernel = corpus.CORPUS["gemm_nn"]()
    jit = tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="cuda")
    assert "mma.sync.aligned" in jit.export_ptx() or "wgmma.mma_async" in jit.export_ptx()


def test_sync_grid_orders_the_blocks_on_the_gpu():
    """A cooperative launch (T.sync_grid): each block reads what the other block wrote before the barrier."""
    import torch
    from test_sync_grid import _rotate_after_doubling

    import tilelang

    kernel = tilelang.compile(_rotate_after_doubling(), target="cuda")
    a = torch.randn(256, device="cuda")
    b = torch.empty(256, device="cuda")
    want = torch.roll(a * 2, -128)
    kernel(a, b)
    torch.testing.assert_close(b, want)
