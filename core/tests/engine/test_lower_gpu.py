"""Core's pipeline for targets with threads: the corpus lowers to valid tirx that TVM's own CUDA and WebGPU
codegens build (``target.build.*``), and nvcc compiles the CUDA source.

These tests check CORE alone: the `core_only` fixture hides whatever installed backends register for the kind
(passes, tile-op impls, pipeline options), so only core's generic tile-op implementations are used.
"""

from __future__ import annotations

import re
import shutil

import engine_kernels as K
import pytest

CORPUS = {
    "elementwise_add": K.elementwise_add,
    "copy_fill": K.copy_fill,
    "gemm": K.gemm,
    "gemm_fp16": lambda: K.gemm(dtype="float16"),
    "gemm_trans_b": lambda: K.gemm(trans_b=True),
    "gemm_dynamic": K.gemm_dynamic,
    "reduce": K.reduce_rows,
    "softmax": K.softmax,
    "cumsum": K.cumsum,
    "atomic": K.atomic_sum,
    "flash_attention": K.flash_attention,
}


pytestmark = pytest.mark.usefixtures("core_only")


def lower_device(func, target_config):
    """``(host module, device module)`` of `func` lowered by the core pipeline for `target_config`."""
    import tvm
    from tvm.target import Target

    from tilelang.transform import pipeline

    target = Target(target_config)
    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    with pipeline.pass_context({}):
        lowered = pipeline.lower_tile_program(mod, target, Target({"kind": "llvm"}))
        return pipeline.split(lowered, target)


def build_source(func, target_config):
    import tvm_ffi
    from tvm.target import Target

    _, device = lower_device(func, target_config)
    assert device is not None, "a target with threads must produce a device module"
    target = Target(target_config)
    rt = tvm_ffi.get_global_func(f"target.build.{target_config['kind']}")(device, target)
    return rt.inspect_source("")


CUDA = {"kind": "cuda", "arch": "sm_80"}


@pytest.mark.parametrize("name", list(CORPUS))
def test_cuda_source_compiles_with_nvcc(name):
    src = build_source(CORPUS[name](), CUDA)
    assert "__global__" in src
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    from tvm.support import nvcc
    from tvm.target import Target

    with Target(CUDA):
        cubin = nvcc.compile_cuda(src, target_format="cubin", compiler="nvcc")
    assert len(cubin) > 0


@pytest.mark.parametrize("name", [n for n in CORPUS if n not in ("flash_attention", "atomic")])
def test_webgpu_source(name):
    src = build_source(CORPUS[name](), {"kind": "webgpu"})
    assert "@compute" in src


def test_gemm_cuda_has_barriers_around_shared_tiles():
    src = build_source(K.gemm(), CUDA)
    assert src.count("__syncthreads()") >= 2
    assert "extern __shared__" in src


def test_fragments_are_registers_partitioned_over_threads():
    # 64x64 accumulator over 128 threads: 32 registers per thread
    src = build_source(K.gemm(), CUDA)
    assert re.search(r"float C_local_local_ptr\[32\]", src)
