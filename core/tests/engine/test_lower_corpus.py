"""Every kernel of `tilelang.testing.corpus` through `tilelang.lower`: run on the CPU against its torch reference,
and built for CUDA (nvcc to a cubin) and WebGPU with TVM's own device codegens."""

from __future__ import annotations

import shutil

import pytest
import torch

import tilelang
from tilelang.testing.corpus import CORPUS

LAZY = [name for name, factory in CORPUS.items() if not factory().eager]


def call_cpu(ck):
    art = tilelang.lower(ck.func, target="cpu")
    inputs, outs = ck.make_inputs(), ck.make_outputs()
    art.rt_mod[art.name](*ck.call_args(inputs, outs))
    return outs, ck.ref(*inputs)


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("name", LAZY)
def test_corpus_kernel_runs_on_cpu(name):
    ck = CORPUS[name]()
    outs, ref = call_cpu(ck)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for out, expected in zip(outs, refs):
        torch.testing.assert_close(out.float(), expected.float(), atol=ck.atol, rtol=ck.rtol)


GPU_LAZY = [n for n in LAZY if "cpu" not in n]


# generic atomics call CUDA's atomicMax/atomicMin, which do not exist for float (the CUDA backend brings its own)
@pytest.mark.parametrize("name", [n for n in GPU_LAZY if n != "atomic_scalar"])
def test_corpus_kernel_builds_for_cuda(core_only, name):
    from test_lower_gpu import CUDA, build_source

    src = build_source(CORPUS[name]().func, CUDA)
    assert "__global__" in src
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    from tvm.support import nvcc
    from tvm.target import Target

    with Target(CUDA):
        assert nvcc.compile_cuda(src, target_format="cubin", compiler="nvcc")


@pytest.mark.parametrize("name", [n for n in GPU_LAZY if "atomic" not in n and "flash" not in n])
def test_corpus_kernel_builds_for_webgpu(core_only, name):
    from test_lower_gpu import build_source

    assert "@compute" in build_source(CORPUS[name]().func, {"kind": "webgpu"})
