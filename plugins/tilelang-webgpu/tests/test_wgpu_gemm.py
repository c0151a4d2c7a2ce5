"""The WebGPU GEMM tile-op implementation: selected for fp32 GEMMs, correct against torch, and the WGSL rewrites
(float atomics, scalarised registers) it and the atomics rely on."""

from __future__ import annotations

import re

import pytest
import torch

import tilelang
from tilelang.testing import corpus


def _run(kernel):
    compiled = tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="webgpu", execution_backend="wgpu")
    inputs = kernel.make_inputs()
    out = compiled(*inputs)
    torch.testing.assert_close(out.float(), kernel.ref(*inputs).float(), atol=kernel.atol, rtol=kernel.rtol)
    return compiled


def test_webgpu_gemm_is_registered_above_the_generic_one():
    from tilelang.backend.tile_ops import tile_op_impls_for

    impls = {i.name: i for i in tile_op_impls_for("tl.gemm", {"kind": "webgpu"})}
    assert impls["webgpu_register_blocked"].priority > 0


def test_block_choice():
    from tilelang_webgpu.tileops.gemm import _block, _grid

    assert _grid(64, 64, 128) == (32, 1)
    assert _grid(64, 256, 128) == (64, 2)
    assert _grid(64, 64, 96) is None
    assert _block(64, 64, 128) == (16, 8, 4, 8)


CASES = {
    "nn": lambda: corpus.gemm(M=128, N=128, K=96, dtype="float32"),
    "nt": lambda: corpus.gemm(M=128, N=128, K=96, dtype="float32", trans_B=True),
    "tn": lambda: corpus.gemm(M=128, N=128, K=96, dtype="float32", trans_A=True),
    "relu": lambda: corpus.gemm(M=128, N=128, K=96, dtype="float32", relu=True),
    "fragment_a": lambda: corpus.gemm_fragment_a(dtype="float32"),
    # A + B tiles fill the workgroup memory: no exchange, the cyclic 32x1 grid
    "cyclic": lambda: corpus.gemm(M=128, N=128, K=128, block_K=64, dtype="float32"),
    # wide tile: N % threads == 0 (every row, two columns per thread)
    "wide": lambda: corpus.gemm(M=64, N=256, K=64, block_M=16, block_N=256, block_K=16, dtype="float32"),
    "rect": lambda: corpus.gemm(M=128, N=64, K=64, block_M=32, block_N=64, block_K=16, dtype="float32", threads=64),
    # 96 threads do not split a 64x64 tile into a grid: the generic implementation serves it
    "fallback": lambda: corpus.gemm(M=64, N=64, K=64, dtype="float32", threads=96),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gemm_matches_torch(wgpu_backend, name):
    compiled = _run(CASES[name]())
    source = compiled.get_kernel_source()
    assert ("_acc" in source) == (name != "fallback")


def test_gemm_exchange_and_cyclic_paths_are_taken(wgpu_backend, cyclic_fragments):
    exchanged = tilelang.lower(CASES["nn"]().func, target="webgpu").kernel_source
    cyclic = tilelang.lower(CASES["cyclic"]().func, target="webgpu").kernel_source
    assert "_xchg" in exchanged and "_acc" in exchanged
    assert "_xchg" not in cyclic and "_acc" in cyclic


def test_gemm_vector_layout_path(wgpu_backend):
    """The backend's default (4-lane runs for GEMM accumulators): C's registers are vec4s, the result correct."""
    compiled = _run(CASES["cyclic"]())
    assert re.search(r"var C_local_local_0 : vec4<f32>;", compiled.artifact.kernel_source)


def test_legalize_atomics_rewrites_float_atomics_into_cas_loops():
    from tilelang_webgpu.atomics import legalize_atomics

    src = ("@group(0) @binding(0) var<storage, read> S_ptr : array<f32>;\n"
           "@compute @workgroup_size(1, 1, 1)\nfn k() {\n"
           "  S_ptr[0i] = (S_ptr[1i] + 1.0f);\n"
           "  atomicAdd((&(S_ptr[(i32(threadIdx.x) & 63i)])), 2.0f);\n}\n")
    out = legalize_atomics(src)
    assert "var<storage, read_write> S_ptr : array<atomic<u32>>;" in out
    assert "atomicCompareExchangeWeak(&S_ptr[i]" in out
    assert "tl_atomic_add_S_ptr(i32((i32(threadIdx.x) & 63i)), 2.0f);" in out
    assert "atomicStore(&S_ptr[0i], bitcast<u32>((bitcast<f32>(atomicLoad(&S_ptr[1i])) + 1.0f)));" in out


def test_scalarize_only_touches_constant_indexed_locals():
    from tilelang_webgpu.scalarize import scalarize_local_arrays

    src = ("var<workgroup> w : array<f32, 4>;\nfn k() {\n  var a : array<f32, 2>;\n  var b : array<f32, 2>;\n"
           "  a[0i] = 1.0f;\n  a[1i] = a[0i];\n  b[i] = 2.0f;\n  w[0i] = a[1i] + b[0i];\n}\n")
    out = scalarize_local_arrays(src)
    assert "var a_0 : f32;" in out and "a_1 = a_0;" in out
    assert "var b : array<f32, 2>;" in out and "b[i] = 2.0f;" in out
    assert "var<workgroup> w : array<f32, 4>;" in out and "w[0i]" in out
