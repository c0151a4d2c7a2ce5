"""The WebGPU tile-op implementations and passes that make the corpus fast and fit: vec4 tile copies and GEMM
reads, accumulators hoisted out of the K loop, tree reductions, unrolled register loops, staged-in-chunks fragment
operands, the workgroup-memory check."""

from __future__ import annotations

import pytest
import torch

import tilelang
from tilelang.errors import LoweringError
from tilelang.testing import corpus


def _compile(kernel, target="webgpu"):
    return tilelang.compile(kernel.func, out_idx=kernel.out_idx, target=target, execution_backend="wgpu")


def _run_and_check(compiled, kernel):
    inputs = kernel.make_inputs()
    torch.testing.assert_close(compiled(*inputs).float(), kernel.ref(*inputs).float(), atol=kernel.atol,
                               rtol=kernel.rtol)


def test_gemm_tiles_are_vec4_arrays_and_registers_are_scalars(wgpu_backend, cyclic_fragments):
    kernel = corpus.gemm(M=128, N=128, K=128, dtype="float32")
    compiled = _compile(kernel)
    src = compiled.artifact.kernel_source
    # the tile copies and the GEMM's reads are all aligned 4-lane accesses: the tiles become vec4 arrays
    assert "var<workgroup> A_shared : array<vec4<f32>, 512>;" in src
    assert "var<workgroup> B_shared : array<vec4<f32>, 512>;" in src
    # the partitioned C fragment's register loops are unrolled, so no function-scope array is left
    assert "var C_local_local : array" not in src and "var C_local_local_0 : f32;" in src
    # the accumulator moves through the exchange tile once, outside the K loop (HoistGemmAccumulators)
    xchg_lines = [line for line in src.splitlines() if "C_local_xchg[" in line]
    assert xchg_lines and all(line.startswith("  C_local") for line in xchg_lines)
    _run_and_check(compiled, kernel)


@pytest.mark.parametrize("trans_a,trans_b", [(False, True), (True, False)])
def test_gemm_transposed_operands(wgpu_backend, trans_a, trans_b):
    kernel = corpus.gemm(M=128, N=64, K=96, dtype="float32", trans_A=trans_a, trans_B=trans_b)
    _run_and_check(_compile(kernel), kernel)


def test_unaligned_copy_falls_back_to_the_generic_copy(wgpu_backend):
    # 100 columns: tiles overhang the tensor, so the copy needs bounds tests and stays scalar
    kernel = corpus.gemm(M=100, N=100, K=100, dtype="float32")
    compiled = _compile(kernel)
    assert "array<vec4<f32>" not in compiled.artifact.kernel_source.split("A_shared : ")[1].split(";")[0]
    _run_and_check(compiled, kernel)


@pytest.mark.parametrize("n,block_m", [(1024, 4), (64, 16)])
def test_softmax_reduces_with_a_tree(wgpu_backend, n, block_m):
    kernel = corpus.softmax(M=64, N=n, block_M=block_m)
    compiled = _compile(kernel)
    src = compiled.artifact.kernel_source
    # no thread folds a whole row out of workgroup memory: the rows' partials meet in a small tile
    assert f"for (var r : i32 = 0i; r < {n}i; r++)" not in src
    assert "row_max_red" in src
    _run_and_check(compiled, kernel)


def test_flash_attention_fits_32_kib(wgpu_backend):
    from tilelang_webgpu.adapter import features

    if "shader-f16" not in features():
        pytest.skip("flash attention is float16: needs shader-f16")
    kernel = corpus.flash_attention(seq_len=128, is_causal=False)
    compiled = _compile(kernel)
    assert compiled.artifact.kernel_source.count("var<workgroup>") >= 3
    _run_and_check(compiled, kernel)


def test_workgroup_memory_overflow_names_the_arrays():
    kernel = corpus.gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=64, dtype="float32")
    with pytest.raises(LoweringError, match=r"65536 bytes of workgroup memory.*A_shared \(.*32768 B\).*B_shared"):
        tilelang.compile(kernel.func, out_idx=kernel.out_idx, target="webgpu")
