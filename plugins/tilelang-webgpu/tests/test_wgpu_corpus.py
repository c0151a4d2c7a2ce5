"""The DSL corpus compiled for WebGPU, run through the ``wgpu`` backend and compared with its torch references."""

from __future__ import annotations

import pytest
import torch

import tilelang
from tilelang.errors import TileLangError
from tilelang.testing.corpus import CORPUS

# kernels TVM's WGSL cannot express yet, with the reason (checked: they must fail, and clearly)
KNOWN_GAPS: dict[str, str] = {}


def _check(outs, refs, kernel) -> None:
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    refs = refs if isinstance(refs, (list, tuple)) else [refs]
    for out, ref in zip(outs, refs):
        torch.testing.assert_close(out.float(), ref.float(), atol=kernel.atol, rtol=kernel.rtol)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_kernel_runs_on_webgpu(wgpu_backend, name):
    kernel = CORPUS[name]()  # float16 kernels run on adapters without shader-f16 too (packed_f16)
    inputs = kernel.make_inputs()
    if name in KNOWN_GAPS:
        with pytest.raises(TileLangError):
            tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="webgpu", execution_backend="wgpu")
        pytest.xfail(KNOWN_GAPS[name])
    if kernel.eager:
        jitted = tilelang.jit(target="webgpu", execution_backend="wgpu")(kernel.func)
        _check(jitted(*inputs), kernel.ref(*inputs), kernel)
        return
    if "atomic" in kernel.tags:  # atomics accumulate into their outputs: pass zero-filled ones
        compiled = tilelang.compile(kernel.func, target="webgpu", execution_backend="wgpu")
        outputs = kernel.make_outputs()
        compiled(*kernel.call_args(inputs, outputs))
        _check(outputs, kernel.ref(*inputs), kernel)
        return
    compiled = tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="webgpu", execution_backend="wgpu")
    assert compiled.execution_backend == "wgpu"
    _check(compiled(*inputs), kernel.ref(*inputs), kernel)
