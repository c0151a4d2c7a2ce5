"""The reference's WebGPU module paths (``tilelang.webgpu.<x>``), exercised through this backend."""

from __future__ import annotations

import importlib

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T


def _scale_rows(m: int = 64, n: int = 128, block: int = 16):
    @T.prim_func
    def scale(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32")):
        with T.Kernel(m // block, threads=128) as bx:
            tile = T.alloc_shared((block, n), "float32")
            T.copy(A[bx * block, 0], tile)
            for i, j in T.Parallel(block, n):
                B[bx * block + i, j] = tile[i, j] * 3.0 + 1.0

    return scale


def test_language_is_the_common_surface():
    webgpu_language = importlib.import_module("tilelang.webgpu.language")
    common = importlib.import_module("tilelang.language.common")
    assert webgpu_language.__tilelang_dialect__ == "webgpu"
    assert set(webgpu_language.__all__) == set(common.__all__)
    assert webgpu_language.Parallel is T.Parallel and webgpu_language.copy is T.copy
    with pytest.raises(AttributeError, match="common language"):
        webgpu_language.tma_copy  # noqa: B018 - a CUDA name


def test_pipeline_body_gives_the_kernel_the_engine_builds(monkeypatch: pytest.MonkeyPatch, wgpu_backend):
    from tilelang.backend.device_codegen import resolve_device_codegen
    from tilelang.transform import pipeline
    from tilelang.webgpu.pipeline import WebGPUPassPipelineBody

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    func = _scale_rows()
    target = tvm.target.Target({"kind": "webgpu"})
    with pipeline.pass_context({}):
        lowered = WebGPUPassPipelineBody(tvm.IRModule({"main": func}), "webgpu")
        _, device_mod = pipeline.split(lowered, target)
    assert device_mod is not None
    wgsl = resolve_device_codegen(target).lower(device_mod, target).inspect_source()
    assert "@compute" in wgsl and "var<workgroup>" in wgsl
    artifact = tilelang.lower(func, target="webgpu")
    assert wgsl.strip() == artifact.kernel_source.strip()
    a, b = torch.randn(64, 128), torch.zeros(64, 128)
    wgpu_backend.load(artifact)(a, b)
    torch.testing.assert_close(b, a * 3.0 + 1.0)
    with pytest.raises(ValueError, match="webgpu target"):
        WebGPUPassPipelineBody(tvm.IRModule({"main": func}), tvm.target.Target({"kind": "llvm"}))
