"""Software pipelining end to end: with ``pipeline_options["software_pipeline"]`` forced on, pipelined kernels give
exactly what the serial loop gives (CPU runs against torch), and the CUDA source builds with nvcc."""

from __future__ import annotations

import shutil

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.testing import corpus


@pytest.fixture
def pipelined(monkeypatch):
    """Every target asks for software pipelining (what the CUDA backend's options do)."""
    from tilelang.transform import utils as transform_utils

    real = transform_utils.pipeline_options
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")  # kernels built so must not reach the cache of later tests
    monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: {**real(target), "software_pipeline": True})


def _run_cpu(ck):
    art = tilelang.lower(ck.func, target="cpu")
    inputs, outs = ck.make_inputs(), ck.make_outputs()
    art.rt_mod[art.name](*ck.call_args(inputs, outs))
    ref = ck.ref(*inputs)
    for out, expected in zip(outs, ref if isinstance(ref, tuple) else (ref,)):
        torch.testing.assert_close(out.float(), expected.float(), atol=ck.atol, rtol=ck.rtol)
    return art


CASES = {
    "gemm_2_stages": (lambda: corpus.gemm(num_stages=2), 2),
    "gemm_3_stages": (lambda: corpus.gemm(num_stages=3), 3),
    "gemm_4_stages_short_k": (lambda: corpus.gemm(M=64, N=64, K=64, num_stages=4), 4),
    "gemm_tn_edges": (lambda: corpus.gemm(M=100, N=90, K=72, trans_A=True, num_stages=3), 3),
    "gemm_fragment_a": (corpus.gemm_fragment_a, 2),
    "quickstart": (corpus.quickstart_lazy, 3),
    "flash_attention": (lambda: corpus.flash_attention(num_stages=2), 2),
    "flash_attention_edges": (lambda: corpus.flash_attention(seq_len=100, num_stages=3), 3),
}


def _versioned_tiles(func, stages):
    """Names of the shared tiles that InjectSoftwarePipeline gave `stages` versions (for the CPU target)."""
    import tvm
    from tvm.target import Target

    from tilelang.transform import CheckSemantics, InjectSoftwarePipeline, LayoutInference
    from tilelang.transform import utils as C

    target = Target({"kind": "llvm"})
    mod = tvm.tirx.transform.BindTarget(target)(tvm.IRModule({"main": func}))
    for factory in (CheckSemantics, LayoutInference, InjectSoftwarePipeline):
        mod = factory(target)(mod)
    return sorted(str(a.buffer.name) for a in C.allocations(mod["main"].body)
                  if "shared" in C.scope_of(a.buffer) and C.as_int(a.buffer.ty.shape[0]) == stages)


@pytest.mark.parametrize("name", list(CASES))
def test_pipelined_kernel_matches_torch_on_cpu(pipelined, name):
    factory, stages = CASES[name]
    _run_cpu(factory())
    expected = ["K_shared", "V_shared"] if name.startswith("flash") else ["A_shared", "B_shared"]
    assert _versioned_tiles(factory().func, stages) == expected


def dynamic_k_gemm(M=64, N=64, bm=32, bn=32, bk=16, num_stages=3):
    K = T.dynamic("k")

    @T.prim_func
    def dynamic_k_gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
                       C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), "float32")
            B_shared = T.alloc_shared((bk, bn), "float32")
            C_local = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=num_stages):
                T.copy(A[by * bm, k * bk], A_shared)
                T.copy(B[k * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * bm, bx * bn])

    return dynamic_k_gemm


@pytest.mark.parametrize("k", [1, 16, 40, 100])
def test_dynamic_trip_count_including_fewer_iterations_than_stages(pipelined, k):
    art = tilelang.lower(dynamic_k_gemm(), target="cpu")
    a, b, c = torch.randn(64, k), torch.randn(k, 64), torch.zeros(64, 64)
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)


CUDA = {"kind": "cuda", "arch": "sm_80"}


@pytest.mark.parametrize("name", ["gemm_3_stages", "gemm_tn_edges", "quickstart", "flash_attention"])
def test_pipelined_cuda_source_compiles(pipelined, name):
    art = tilelang.lower(CASES[name][0]().func, target=CUDA)
    src = art.kernel_source
    assert "__global__" in src
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    # the backend's nvcc wrapper (the reference's name): the source includes the backend's helper headers
    nvcc = pytest.importorskip("tilelang.contrib.nvcc")
    assert nvcc.compile_cuda(src, target_format="cubin", arch=["-arch=sm_80"])


def test_pipelined_cuda_source_compiles_with_core_only(core_only, pipelined):
    from test_lower_gpu import build_source

    src = build_source(corpus.gemm(num_stages=3).func, CUDA)
    assert "__syncthreads" in src
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    from tvm.support import nvcc
    from tvm.target import Target

    with Target(CUDA):
        assert nvcc.compile_cuda(src, target_format="cubin", compiler="nvcc")
