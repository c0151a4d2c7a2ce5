"""Vector fragment layouts (core's ``fragment_vector_lanes`` pipeline option) on WebGPU: the corpus stays correct
with the option forced on, the backend's own GEMM / reduction follow the vector layout, and the WGSL keeps a
thread's four consecutive elements in one ``vec4`` register."""

from __future__ import annotations

import re

import pytest
import torch

import tilelang
from tilelang.testing.corpus import CORPUS


@pytest.fixture
def lanes(monkeypatch):
    """Force ``fragment_vector_lanes`` / ``fragment_vector_scope`` (and bypass the kernel cache, whose key does not
    hold the override)."""
    from tilelang.transform import utils as transform_utils

    registered = transform_utils.pipeline_options
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")

    def force(value: int, scope: str = "all") -> None:
        monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: {
            **registered(target), "fragment_vector_lanes": value, "fragment_vector_scope": scope})

    return force


# kernels with partitioned fragments whose innermost extent takes 4 lanes (gemm, reduction, flash attention,
# a fragment A operand) and an elementwise one
VECTOR_CASES = ["elementwise_add", "gemm_nn", "gemm_nt", "gemm_fragment_a", "row_sum", "row_max", "softmax",
                "cumsum", "atomic_colsum", "flash_attention"]


@pytest.mark.parametrize("name", VECTOR_CASES)
def test_corpus_correct_with_vector_fragments(wgpu_backend, lanes, name):
    """Every fragment that can take 4 lanes does (scope "all"; the backend's default is scope "gemm")."""
    from tilelang_webgpu.adapter import features

    lanes(4)
    kernel = CORPUS[name]()
    if any(a.dtype == "float16" for a in kernel.args) and "shader-f16" not in features():
        pytest.skip("float16 kernels need the shader-f16 feature, which this adapter lacks")
    inputs = kernel.make_inputs()
    if "atomic" in kernel.tags:
        compiled = tilelang.compile(kernel.func, target="webgpu", execution_backend="wgpu")
        outs = kernel.make_outputs()
        compiled(*kernel.call_args(inputs, outs))
    else:
        compiled = tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="webgpu", execution_backend="wgpu")
        outs = compiled(*inputs)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    refs = kernel.ref(*inputs)
    refs = refs if isinstance(refs, (list, tuple)) else [refs]
    for out, ref in zip(outs, refs):
        torch.testing.assert_close(out.float(), ref.float(), atol=kernel.atol, rtol=kernel.rtol)


def test_wgsl_keeps_vector_runs_in_vec4_registers(lanes):
    lanes(4)
    source = tilelang.lower(CORPUS["elementwise_add"]().func, target="webgpu").kernel_source
    # the fragments' registers are vec4s (scalarized into one vec4 var per run), read and written whole
    assert re.search(r"var B_local_local_0 : vec4<f32>;", source), source
    # the global side: an aligned 4-lane read is one read of a vec4 storage view
    # (`tilelang_webgpu.passes.mark_vector_globals`)
    assert "B_ptr : array<vec4<f32>>;" in source, source
    assert re.search(r"B_local_local_0 = B_ptr\[\(\w+\) >> 2u\];", source), source
    assert not re.search(r"^\s+var \w+ : array<vec4", source, re.M)  # no register array left in memory
    lanes(1)
    cyclic = tilelang.lower(CORPUS["elementwise_add"]().func, target="webgpu").kernel_source
    assert "vec4<f32>(B_ptr" not in cyclic


def test_gemm_grid_under_vector_layout():
    from tilelang.layout import CyclicFragment
    from tilelang_webgpu.tileops.gemm import _grid

    assert _grid(64, 64, 128) == (32, 1)  # cyclic: a thin strip
    assert _grid(64, 64, 128, 4) == (8, 4)  # vector: 8 rows x a run of 4 columns
    assert _grid(16, 512, 32, 4) == (16, 16)
    assert _grid(6, 6, 4, 4) is None
    # the grid is exactly the elements the Fragment gives each thread
    frag = CyclicFragment((64, 64), 128, vector_lanes=4)
    thread, _ = frag.ownership()
    assert sorted(int(x) for x in (thread == 5).sum(axis=1)) == [0] * 56 + [4] * 8


def test_backend_default_vectorises_gemm_accumulators_only():
    """The registered options: flash attention's accumulators get 4-lane runs (and its tensors vec4 storage
    views), an elementwise kernel stays cyclic (the same WGSL as with the option off)."""
    from tilelang.backend.target import target_kind_spec

    opts = target_kind_spec("webgpu").pipeline_options
    assert opts["fragment_vector_lanes"] == 4 and opts["fragment_vector_scope"] == "gemm"
    assert opts["webgpu_vector_globals"] is True
    flash = tilelang.lower(CORPUS["flash_attention"]().func, target="webgpu").kernel_source
    assert re.search(r"var acc_o_local_0 : vec4<f32>;", flash), flash
    assert "Q_ptr : array<vec4<f16>>;" in flash, flash
    add = tilelang.lower(CORPUS["elementwise_add"]().func, target="webgpu").kernel_source
    assert "vec4<f32>(B_ptr" not in add and "B_ptr : array<f32>;" in add
