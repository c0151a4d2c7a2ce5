"""A 128-bit fp16 vector widened to float32x8 and combined with a scalar: TVM's CUDA codegen keeps the 32-byte
value in a ``ulonglong4`` and prints the scalar's broadcast as an eight-argument ``make_ulonglong4``, which the
intrinsics header provides (the fuzzer's CUDA profile, seed 20261411, found the nvcc error "too many arguments in
function call"). Compiled with nvcc where present, the result checked in the SIMT emulator."""

from __future__ import annotations

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang_cuda.intrinsics.header import header_for


def clamp_exp(op: str):
    @T.prim_func
    def kernel(A: T.Tensor((16, 16), "float16"), C: T.Tensor((16, 16), "float16")):
        with T.Kernel(1, threads=32):
            A_s = T.alloc_shared((16, 16), "float16")
            T.copy(A, A_s)
            C_f = T.alloc_fragment((16, 16), "float16")
            for i, j in T.Parallel(16, 16):
                x = T.cast(A_s[i, j], "float32")
                C_f[i, j] = T.cast(T.exp(T.min(x, T.float32(1.5)) if op == "min" else x * T.float32(0.5)), "float16")
            T.copy(C_f, C)

    return kernel


@needs_nvcc
@pytest.mark.parametrize("op", ["min", "mul"])
def test_float32x8_with_a_scalar_compiles_and_computes(op):
    art = tilelang.lower(clamp_exp(op), target={"kind": "cuda", "arch": "sm_80"})
    assert "make_ulonglong4(" in art.kernel_source and art.files["kernel.cubin"][:4] == b"\x7fELF"
    a = torch.randn(16, 16).half()
    c = torch.zeros(16, 16, dtype=torch.float16)
    emulate(art, a, c)
    x = a.float()
    ref = torch.exp(x.clamp(max=1.5) if op == "min" else x * 0.5).half()
    torch.testing.assert_close(c, ref, atol=1e-3, rtol=1e-3)


def test_the_eight_lane_constructor_is_added_only_where_called():
    call = "ulonglong4 v = make_ulonglong4(1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f);"
    assert "make_ulonglong4(float v0" in header_for(call)
    assert "make_ulonglong4(float v0" not in header_for("ulonglong4 v = make_ulonglong4(1ull, 2ull, 3ull, 4ull);")
