"""Property: every generated tile program computes what its torch expression computes, on every backend.

CPU and WebGPU run each program and compare with torch; CUDA lowers it for sm_80 and sm_90a, builds the cubins
with nvcc and runs the small ones in the SIMT emulator, and where there is an NVIDIA GPU runs each on it; ROCm
lowers for gfx942 and links the code object; Metal lowers and checks the MSL with clang-22. A failure is shrunk
by hypothesis to a minimal program, printed as a standalone script. QUICK profile by default;
``TILELANG_FUZZ_EXAMPLES=2000`` (``nox -s fuzz``) runs the long one.
"""

from __future__ import annotations

from typing import Any

import fuzz_harness as H
import pytest
from fuzz_grammar import DTYPES, programs
from fuzz_profiles import current
from hypothesis import given
from hypothesis import seed as hypothesis_seed

PROFILE = current()

# WGSL has no bfloat16 type: bf16 tensors on WebGPU are a clear LoweringError (tilelang_webgpu.passes.check_dtypes)
# (a capability gap of the target, reported in the fuzzing notes), so WebGPU programs use fp32 / fp16 only
WEBGPU_DTYPES = ("float32", "float16")


def _require(check: str) -> None:
    reason = H.availability(check)
    if reason is not None:
        pytest.skip(reason)


def _fuzz(backend: str, dtypes: tuple[str, ...] = DTYPES) -> Any:
    """`given` + the profile's settings (+ its seed) for one backend's property."""
    def wrap(test: Any) -> Any:
        test = PROFILE.settings(backend)(given(programs(dtypes=dtypes, max_dim=PROFILE.max_dim))(test))
        return hypothesis_seed(PROFILE.seed)(test) if PROFILE.seed is not None else test

    return wrap


@pytest.mark.backend("llvm")
@_fuzz("cpu")
def test_programs_match_torch_on_cpu(program):
    H.run_cpu(program)


@pytest.mark.backend("webgpu")
@_fuzz("webgpu", WEBGPU_DTYPES)
def test_programs_match_torch_on_webgpu(program):
    _require("webgpu")
    H.run_webgpu(program)


@pytest.mark.backend("cuda")
@_fuzz("cuda")
def test_programs_build_for_cuda(program):
    nvcc = PROFILE.nvcc and H.availability("nvcc") is None
    emulate = program.elements <= PROFILE.emulate_limit and H.availability("cuda_emulator") is None
    H.check_cuda(program, "sm_80", nvcc=nvcc, emulate=emulate)
    H.check_cuda(program, "sm_90a", nvcc=nvcc, emulate=False)


@pytest.mark.gpu
@pytest.mark.backend("cuda")
@_fuzz("cuda_gpu")
def test_programs_match_torch_on_the_gpu(program):
    _require("cuda_gpu")
    H.run_cuda_gpu(program)


@pytest.mark.backend("rocm")
@_fuzz("rocm")
def test_programs_build_for_rocm(program):
    H.check_rocm(program, "gfx942", link=H.availability("rocm_link") is None)


@pytest.mark.backend("metal")
@_fuzz("metal")
def test_programs_build_for_metal(program):
    H.check_metal(program, clang=H.availability("metal_clang") is None)
