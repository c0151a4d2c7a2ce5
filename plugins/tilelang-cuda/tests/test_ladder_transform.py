"""`TensorCoreIntrinEmitterWithLadderTransform` on pre-transformed operands (the reference 0.1.15's Ladder kinds):
tiled shared operands ``[MN / 16, K / 16, 16, 16]`` read with ``ldmatrix`` in the plain tile order (kind 1), with
each lane's ldmatrix row at the tile's 16-byte run ``lane`` (kind 2), or loaded element-wise as each lane's
fragment (kind 3). The tiles are permuted here from the PTX fragment maps and ldmatrix row maps, and the GEMM
``C = A @ B^T`` runs in the SIMT emulator (float16 operands, float32 accumulators); the kernels compile with nvcc
for sm_80."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang_cuda.intrinsics.layout.mma_layout import a_fragment, b_fragment
from tilelang_cuda.intrinsics.layout.utils import get_ldmatrix_offset
from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitterWithLadderTransform

SM80 = {"kind": "cuda", "arch": "sm_80"}
M = N = 32
K = 64
CHUNK = 32


def transform(x: np.ndarray, matrix: str, kind: int) -> np.ndarray:
    """Operand `x` (A ``[M, K]`` or B ``[N, K]``) as Ladder stores it: ``[MN / 16, K / 16, 16, 16]`` tiles."""
    mn, k = x.shape
    out = np.zeros((mn // 16, k // 16, 16, 16), x.dtype)
    for t in range(mn // 16):
        for u in range(k // 16):
            tile = x[t * 16:(t + 1) * 16, u * 16:(u + 1) * 16]
            flat = out[t, u].reshape(-1)
            if kind == 1:
                out[t, u] = tile
            elif kind == 2:  # lane l's ldmatrix row (8 halves) is run l of the tile
                for lane in range(32):
                    r, c = get_ldmatrix_offset(matrix, lane, 0, None, "float16", matrix == "B")
                    flat[lane * 8:lane * 8 + 8] = tile[r, c:c + 8]
            else:  # lane l's fragment (8 halves) is run l of the tile
                frag = a_fragment if matrix == "A" else b_fragment
                for lane in range(32):
                    for v in range(8):
                        r, c = frag(lane, v, 2)
                        flat[lane * 8 + v] = tile[r, c]
    return out


def ladder_gemm(kind_a: int, kind_b: int):
    e = TensorCoreIntrinEmitterWithLadderTransform(
        a_dtype="float16", b_dtype="float16", accum_dtype="float32", a_transposed=False, b_transposed=True,
        block_row_warps=1, block_col_warps=1, warp_row_tiles=M, warp_col_tiles=N, chunk=CHUNK,
        transform_kind_a=kind_a, transform_kind_b=kind_b)
    a_shape = (M // 16, K // 16, 16, 16) if kind_a else (M, K)
    a_tile = (M // 16, CHUNK // 16, 16, 16) if kind_a else (M, CHUNK)
    steps = CHUNK // 16

    @T.prim_func
    def k(A: T.Tensor(a_shape, "float16"), B: T.Tensor((N // 16, K // 16, 16, 16), "float16"),
          C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32):
            A_s = T.alloc_shared(a_tile, "float16")
            B_s = T.alloc_shared((N // 16, CHUNK // 16, 16, 16), "float16")
            C_s = T.alloc_shared((M // 16, N // 16, 16, 16), "float32")
            A_l = T.alloc_local((e.warp_rows * e.local_size_a,), "float16")
            B_l = T.alloc_local((e.warp_cols * e.local_size_b,), "float16")
            C_l = T.alloc_local((e.warp_rows * e.warp_cols * e.local_size_out,), "float32")
            for i in T.serial(e.warp_rows * e.warp_cols * e.local_size_out):
                C_l[i] = 0
            for ko in T.serial(K // CHUNK):
                if kind_a:
                    for t, u, r, c in T.Parallel(M // 16, steps, 16, 16):
                        A_s[t, u, r, c] = A[t, ko * steps + u, r, c]
                else:
                    for i, kk in T.Parallel(M, CHUNK):
                        A_s[i, kk] = A[i, ko * CHUNK + kk]
                for t, u, r, c in T.Parallel(N // 16, steps, 16, 16):
                    B_s[t, u, r, c] = B[t, ko * steps + u, r, c]
                for ki in T.serial(steps):
                    e.ldmatrix_a(A_l, A_s, ki)
                    e.ldmatrix_b(B_l, B_s, ki)
                    e.mma(A_l, B_l, C_l)
            e.stmatrix(C_l, C_s)
            for i, j in T.Parallel(M, N):
                C[i, j] = C_s[i // 16, j // 16, i % 16, j % 16]

    return k


@pytest.mark.parametrize("kind_a, kind_b", [(0, 1), (0, 2), (0, 3), (1, 1), (2, 2), (3, 3), (3, 1), (2, 3)])
def test_transformed_operands_multiply_like_the_plain_ones(kind_a, kind_b):
    rng = np.random.default_rng(kind_a * 4 + kind_b)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    a_in = transform(a, "A", kind_a) if kind_a else a
    c = torch.zeros(M, N)
    emulate(tilelang.lower(ladder_gemm(kind_a, kind_b), target=SM80), torch.from_numpy(a_in),
            torch.from_numpy(transform(b, "B", kind_b)), c)
    torch.testing.assert_close(c, torch.from_numpy(a.astype(np.float32) @ b.astype(np.float32).T), rtol=1e-3,
                               atol=1e-3)


@needs_nvcc
@pytest.mark.parametrize("kind", [1, 2, 3])
def test_transformed_gemm_compiles_for_sm80(kind):
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(tilelang.lower(ladder_gemm(kind, kind), target=SM80)).ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert ("ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx) == (kind != 3)


def test_a_plain_shared_tile_for_a_transformed_operand_is_named():
    e = TensorCoreIntrinEmitterWithLadderTransform(a_dtype="float16", b_dtype="float16", accum_dtype="float32",
                                                   b_transposed=True, block_row_warps=1, block_col_warps=1,
                                                   warp_row_tiles=32, warp_col_tiles=32, chunk=32,
                                                   transform_kind_b=2)
    with pytest.raises(ValueError, match=r"reads a tiled shared operand \[N / 16, K / 16, 16, 16\]"):
        @T.prim_func
        def k(B: T.Tensor((32, 32), "float16")):
            with T.Kernel(1, threads=32):
                B_s = T.alloc_shared((32, 32), "float16")
                B_l = T.alloc_local((e.warp_cols * e.local_size_b,), "float16")
                e.ldmatrix_b(B_l, B_s, 0)
