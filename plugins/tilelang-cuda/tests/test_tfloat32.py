"""``T.tfloat32`` kernels on CUDA: tf32 values are float32 values holding tf32 numbers
(`tilelang.transform.legalize_tfloat32`), and a float32 gemm on tf32 operands is a tf32 mma."""

from __future__ import annotations

import struct
import warnings

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.transform.legalize_tfloat32 import round_to_tf32


@T.prim_func
def to_tf32(x: T.Tensor((128,), T.float32), h: T.Tensor((128,), T.bfloat16), w: T.Tensor((128,), T.tfloat32),
            y: T.Tensor((128,), T.float32), z: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128):
        f = T.alloc_fragment((128,), T.tfloat32)
        g = T.alloc_fragment((128,), T.tfloat32)
        for i in T.Parallel(128):
            f[i] = x[i]  # float32 -> tf32: rounds
            g[i] = h[i]  # bfloat16 -> tf32: exact
        for i in T.Parallel(128):
            y[i] = f[i]
            z[i] = g[i] * g[i] + w[i] + T.tfloat32(1.0)


def _lower(func):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target={"kind": "cuda", "arch": "sm_90a"})


def _bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def test_round_to_tf32_is_nearest_ties_away_and_keeps_specials():
    one = 1.0
    ulp = 2.0 ** -10  # tf32's spacing at 1
    assert round_to_tf32(one + ulp * 0.49) == one
    assert round_to_tf32(one + ulp * 0.5) == one + ulp  # a tie rounds away from zero
    assert round_to_tf32(-(one + ulp * 0.5)) == -(one + ulp)
    assert _bits(round_to_tf32(3.4e38)) & 0x1FFF == 0
    assert round_to_tf32(float("inf")) == float("inf") and round_to_tf32(-1e39) == float("-inf")
    assert round_to_tf32(float("nan")) != round_to_tf32(float("nan"))


@needs_nvcc
def test_tf32_buffers_and_conversions_build_to_cubin():
    art = _lower(to_tf32)  # TVM's arithmetic failed: "Cannot match type custom[tfloat32] vs int32"
    assert "kernel.cubin" in art.files
    src = art.kernel_source
    assert "custom" not in src and "tfloat32" not in src
    assert "float* __restrict__ w_ptr" in src  # a tf32 tensor is a float32 tensor
    assert "4294959104" in src  # the rounding mask 0xFFFFE000 of float32 -> tf32


@pytest.mark.parametrize("seed", [0, 1])
def test_tf32_conversions_in_the_emulator(seed):
    art = _lower(to_tf32)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(128, generator=gen) * 1000
    x[:3] = torch.tensor([1.0 + 2.0 ** -11, float("inf"), -(1.0 + 2.0 ** -11)])
    h = torch.randn(128, generator=gen).bfloat16()
    w = torch.randn(128, generator=gen)
    y, z = torch.zeros(128), torch.zeros(128)
    emulate(art, x, h, w, y, z)
    expected = torch.tensor([round_to_tf32(float(v)) for v in x])
    assert torch.equal(y, expected)
    assert y[0] == 1.0 + 2.0 ** -10 and y[2] == -(1.0 + 2.0 ** -10)
    torch.testing.assert_close(z, h.float() * h.float() + w + 1.0)


@needs_nvcc
def test_tf32_gemm_from_a_register_fragment_is_a_tf32_mma():
    @T.prim_func
    def gemm_tf32(a: T.Tensor((32, 64), T.bfloat16), b: T.Tensor((32, 64), T.tfloat32),
                  c: T.Tensor((32, 32), T.float32)):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((32, 64), T.bfloat16)
            b_s = T.alloc_shared((32, 64), T.tfloat32)
            a_f = T.alloc_fragment((32, 64), T.tfloat32)
            c_f = T.alloc_fragment((32, 32), T.float32)
            T.clear(c_f)
            T.copy(a, a_s)
            T.copy(b, b_s)
            T.copy(a_s, a_f)
            T.gemm(a_f, b_s, c_f, transpose_B=True)
            T.copy(c_f, c)

    art = _lower(gemm_tf32)
    assert "kernel.cubin" in art.files
    ptx = art.files["kernel.ptx"]
    ptx = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in ptx
