"""Volta (sm_70) tensor-core ``T.gemm``: ``mma.sync.m8n8k4`` kernels run in the SIMT emulator (whose m8n8k4 model
follows the PTX ISA's fragment maps, checked here against a plain matrix product) and match torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from cuda_emulator import M8N8K4_A, M8N8K4_B, M8N8K4_C, M8N8K4_QUAD_PAIRS, emulate, mma_m8n8k4

import tilelang
import tilelang.language as T


@pytest.mark.parametrize("c_type", ["f32", "f16"])
@pytest.mark.parametrize("a_layout,b_layout", [("row", "col"), ("col", "row"), ("row", "row"), ("col", "col")])
def test_m8n8k4_model_is_a_matrix_product_per_quad_pair(c_type, a_layout, b_layout):
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (4, 8, 4)).astype(np.float16)  # one 8 x 4 A, 4 x 8 B, 8 x 8 C per quad-pair
    B = rng.integers(-3, 4, (4, 4, 8)).astype(np.float16)
    Cm = rng.integers(-3, 4, (4, 8, 8)).astype(np.float32)
    a, b, c = np.zeros((32, 4), np.float16), np.zeros((32, 4), np.float16), np.zeros((32, 8), np.float32)
    (ra, ca), (rb, cb), (rc, cc) = M8N8K4_A[a_layout], M8N8K4_B[b_layout], M8N8K4_C[c_type]
    for q, lanes in enumerate(M8N8K4_QUAD_PAIRS):
        a[lanes], b[lanes] = A[q][ra[lanes], ca[lanes]], B[q][rb[lanes], cb[lanes]]
        c[lanes] = Cm[q][rc[lanes], cc[lanes]]
    d = mma_m8n8k4(a, b, c.astype(np.float16) if c_type == "f16" else c, c_type, a_layout, b_layout)
    for q, lanes in enumerate(M8N8K4_QUAD_PAIRS):
        ref = A[q].astype(np.float64) @ B[q] + Cm[q]
        np.testing.assert_array_equal(d[lanes], ref[rc[lanes], cc[lanes]])


def test_m8n8k4_fragments_cover_each_matrix_once():
    for maps, shape, n in ((M8N8K4_A, (8, 4), 4), (M8N8K4_B, (4, 8), 4), (M8N8K4_C, (8, 8), 8)):
        for rows, cols in maps.values():
            for lanes in M8N8K4_QUAD_PAIRS:
                hit = np.zeros(shape, int)
                np.add.at(hit, (rows[lanes].ravel(), cols[lanes].ravel()), 1)
                assert (hit == 1).all() and rows[lanes].size == 8 * n


def _gemm(m: int, n: int, k: int, accum: str, trans_a: bool, trans_b: bool, threads: int, block_k: int,
          a_in_registers: bool = False):
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)
    a_tile = (block_k, m) if trans_a else (m, block_k)
    b_tile = (n, block_k) if trans_b else (block_k, n)

    @T.prim_func
    def gemm(a: T.Tensor(a_shape, "float16"), b: T.Tensor(b_shape, "float16"), c: T.Tensor((m, n), accum)):
        with T.Kernel(1, threads=threads):
            a_s = T.alloc_shared(a_tile, "float16")
            b_s = T.alloc_shared(b_tile, "float16")
            c_f = T.alloc_fragment((m, n), accum)
            T.clear(c_f)
            for ko in T.serial(k // block_k):
                if trans_a:
                    T.copy(a[ko * block_k, 0], a_s)
                else:
                    T.copy(a[0, ko * block_k], a_s)
                if trans_b:
                    T.copy(b[0, ko * block_k], b_s)
                else:
                    T.copy(b[ko * block_k, 0], b_s)
                if a_in_registers:
                    a_f = T.alloc_fragment(a_tile, "float16")
                    T.copy(a_s, a_f)
                    T.gemm(a_f, b_s, c_f, transpose_A=trans_a, transpose_B=trans_b)
                else:
                    T.gemm(a_s, b_s, c_f, transpose_A=trans_a, transpose_B=trans_b)
            T.copy(c_f, c)

    return gemm


def _lower(func, arch: str = "sm_70"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(func, target={"kind": "cuda", "arch": arch}, enable_device_compile=False)


CASES = [  # m, n, k, accum, trans_a, trans_b, threads, block_k
    (64, 64, 32, "float32", False, False, 128, 32), (64, 64, 64, "float32", False, True, 128, 32),
    (32, 64, 32, "float32", True, False, 64, 16), (64, 32, 16, "float32", True, True, 128, 16),
    (16, 16, 8, "float32", False, False, 32, 4), (128, 64, 32, "float32", False, True, 256, 32),
    (64, 64, 32, "float16", False, False, 128, 32), (32, 32, 64, "float16", False, True, 64, 32),
    (32, 48, 16, "float16", True, False, 96, 16), (64, 32, 32, "float16", True, True, 128, 32),
]


@pytest.mark.parametrize("m,n,k,accum,trans_a,trans_b,threads,block_k", CASES)
def test_volta_gemm_emulated_matches_torch(m, n, k, accum, trans_a, trans_b, threads, block_k):
    art = _lower(_gemm(m, n, k, accum, trans_a, trans_b, threads, block_k))
    assert "tl_mma_m8n8k4_f16_" + ("f32" if accum == "float32" else "f16") in str(art.kernel_source)
    torch.manual_seed(0)
    a = torch.randn((k, m) if trans_a else (m, k)).half()
    b = torch.randn((n, k) if trans_b else (k, n)).half()
    c = torch.zeros((m, n), dtype=getattr(torch, accum))
    stats = emulate(art, a, b, c)
    # one block-wide m8n8k4 issue per K step and 16 x 16 atom of a warp
    assert stats["mma"] == (k // 4) * (m // 16) * (n // 16) // (threads // 32)
    ref = (a.T if trans_a else a).float() @ (b.T if trans_b else b).float()
    tol = 1e-3 if accum == "float32" else 5e-2
    torch.testing.assert_close(c.float(), ref, atol=tol * k ** 0.5, rtol=tol)


def test_volta_gemm_with_a_in_registers_emulated():
    art = _lower(_gemm(64, 64, 32, "float32", False, True, 128, 32, a_in_registers=True))
    torch.manual_seed(1)
    a, b, c = torch.randn(64, 32).half(), torch.randn(64, 32).half(), torch.zeros(64, 64)
    emulate(art, a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float().T, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80"])
def test_fp16_gemms_off_volta_do_not_take_the_volta_path(arch):
    source = str(_lower(_gemm(64, 64, 32, "float32", False, True, 128, 32), arch=arch).kernel_source)
    assert "tl_mma_m8n8k4" not in source[source.index("__global__"):]


def test_volta_accumulator_epilogue_and_row_reduce_emulated():
    """A T.Parallel epilogue runs over the m8n8k4 accumulator registers; a row reduction reads them staged."""

    @T.prim_func
    def kern(a: T.Tensor((64, 32), "float16"), b: T.Tensor((32, 64), "float16"), c: T.Tensor((64, 64), "float32"),
             r: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared((64, 32), "float16")
            b_s = T.alloc_shared((32, 64), "float16")
            c_f = T.alloc_fragment((64, 64), "float32")
            m_f = T.alloc_fragment((64,), "float32")
            T.copy(a, a_s)
            T.copy(b, b_s)
            T.gemm(a_s, b_s, c_f, clear_accum=True)
            for i, j in T.Parallel(64, 64):
                c_f[i, j] = c_f[i, j] * 2.0 + T.float32(i)
            T.reduce_max(c_f, m_f, dim=1)
            T.copy(c_f, c)
            T.copy(m_f, r)

    art = _lower(kern)
    assert "tl_mma_m8n8k4_f16_f32" in str(art.kernel_source)
    torch.manual_seed(4)
    a, b = torch.randn(64, 32).half(), torch.randn(32, 64).half()
    c, r = torch.zeros(64, 64), torch.zeros(64)
    emulate(art, a, b, c, r)
    ref = (a.float() @ b.float()) * 2 + torch.arange(64).float()[:, None]
    torch.testing.assert_close(c, ref, atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(r, ref.max(dim=1).values, atol=1e-3, rtol=1e-3)
