"""The CUDA examples: the mma.sync intrinsic-emitter GEMM (sm_80) and the warp-specialised TMA + wgmma GEMM
(sm_90a) are built by nvcc for their architecture, hold the intended instructions in their PTX, and compute
``A @ B^T`` in the SIMT emulator as torch does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "cuda"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


CASES = {
    "mma_intrinsics_gemm": ("mma_intrinsics_gemm", "sm_80", (128, 256, 128),
                            ["ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                             "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"]),
    "warp_specialized_tma_gemm": ("ws_tma_gemm", "sm_90a", (128, 256, 256),
                                  ["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                                   "mbarrier.try_wait.parity", "mbarrier.expect_tx",
                                   "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
                                   "setmaxnreg.inc.sync.aligned.u32 232", "setmaxnreg.dec.sync.aligned.u32 40"]),
}


def _artifact(name: str):
    fn, arch, shape, _ = CASES[name]
    return tilelang.lower(getattr(_example(name), fn)(*shape), target={"kind": "cuda", "arch": arch})


@needs_nvcc
@pytest.mark.parametrize("name", sorted(CASES))
def test_example_compiles_to_its_instructions(name):
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(_artifact(name)).ptx
    missing = [i for i in CASES[name][3] if i not in ptx]
    assert not missing, f"{name}: PTX lacks {missing}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_example_matches_torch_in_the_emulator(name):
    M, N, K = CASES[name][2]
    torch.manual_seed(0)
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(N, K, dtype=torch.float16)
    c = torch.zeros(M, N, dtype=torch.float16)
    stats = emulate(_artifact(name), a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float().T, rtol=1e-2, atol=5e-2)
    assert stats.get("mma", 0) + stats.get("wgmma", 0) > 0
