"""``T.make_blockscaled_gemm_layout``: the TMEM layout of a block-scaled tcgen05 GEMM's accumulator.

The expected maps are the reference TileLang 0.1.15's for the same calls (one-CTA, non-``.ws`` instruction):
M=128 keeps row ``i`` on datapath ``i``, M=64 puts rows in 16-datapath halves (``i // 16 * 32 + i % 16``), M=256
continues the second 128 rows in fresh columns; the reference's error for a K that is not a whole K32 step is kept
as a clear ValueError. Annotated on the accumulator, the layout compiles into the sm_100a block-scaled GEMM.
"""

from __future__ import annotations

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T


def _layout(M, N, K, dtype="float8_e4m3fn", transpose_A=False, accum="float32"):
    out = []

    @T.prim_func
    def k(A: T.Tensor((M, K), dtype)):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((K, M) if transpose_A else (M, K), dtype)
            C_tmem = T.alloc_tmem((M, N), accum)
            out.append(T.make_blockscaled_gemm_layout(C_tmem, A_s, transpose_A=transpose_A))

    assert k is not None
    return out[0]


def _map(layout, i, j):
    return [int(v) for v in layout.map_forward_index([i, j])]


@pytest.mark.parametrize("M, N, K, transpose_A", [(128, 128, 128, False), (128, 256, 64, False),
                                                   (128, 512, 128, False), (128, 48, 128, False),
                                                   (128, 128, 128, True)])
def test_m128_rows_sit_on_their_datapaths(M, N, K, transpose_A):
    lay = _layout(M, N, K, transpose_A=transpose_A)
    assert [int(x) for x in lay.get_output_shape()] == [128, N]
    for i, j in [(0, 0), (1, 0), (0, 1), (17, 5), (64, N // 2 + 3), (M - 1, N - 1)]:
        assert _map(lay, i, j) == [i, j]


@pytest.mark.parametrize("N", [128, 64, 24])
def test_m64_rows_fill_16_datapath_halves(N):
    lay = _layout(64, N, 64)
    assert [int(x) for x in lay.get_output_shape()] == [112, N]
    for i, j in [(0, 0), (15, 1), (16, 2), (17, 5), (32, N - 1), (63, N - 1)]:
        assert _map(lay, i, j) == [i // 16 * 32 + i % 16, j]


def test_m256_continues_in_fresh_columns():
    lay = _layout(256, 128, 128)
    assert [int(x) for x in lay.get_output_shape()] == [128, 256]
    assert _map(lay, 17, 5) == [17, 5]
    assert _map(lay, 128, 67) == [0, 195]
    assert _map(lay, 255, 127) == [127, 255]


def test_k_must_be_whole_k32_steps():
    with pytest.raises(ValueError, match="steps K by 32; K=48"):
        _layout(128, 128, 48)


def test_c_must_be_tensor_memory():
    with pytest.raises(ValueError, match="expects a shared.tmem buffer"):
        @T.prim_func
        def k(A: T.Tensor((128, 128), "float8_e4m3fn")):
            with T.Kernel(1, threads=128):
                A_s = T.alloc_shared((128, 128), "float8_e4m3fn")
                C_s = T.alloc_shared((128, 128), "float32")
                T.make_blockscaled_gemm_layout(C_s, A_s)


@needs_nvcc
def test_annotated_accumulator_compiles_into_the_block_scaled_gemm():
    from test_tcgen05_pair_blockscaled import SM100, blockscaled_gemm

    from tilelang_cuda.compiler import compile_artifact

    M, N, K, bM, bN, bK, gran = 128, 256, 256, 128, 256, 128, 128
    groups = (K // gran + 3) // 4

    @T.prim_func
    def k(A: T.Tensor((M, K), "float8_e4m3fn"), B: T.Tensor((K, N), "float8_e4m3fn"),
          SFA: T.Tensor((groups * M,), "uint32"), SFB: T.Tensor((groups * N,), "uint32"),
          C: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(1, 1, threads=128):
            A_s = T.alloc_shared((bM, bK), "float8_e4m3fn")
            B_s = T.alloc_shared((bK, bN), "float8_e4m3fn")
            SFA_s = T.alloc_shared((bM,), "uint32")
            SFB_s = T.alloc_shared((bN,), "uint32")
            C_tmem = T.alloc_tmem([bM, bN], "float32")
            SFA_tmem = T.alloc_tmem([bM, 4], "uint32")
            SFB_tmem = T.alloc_tmem([bM, bN // 128 * 4], "uint32")
            C_l = T.alloc_fragment((bM, bN), "float32")
            done = T.alloc_barrier([1])
            T.annotate_layout({C_tmem: T.make_blockscaled_gemm_layout(C_tmem, A_s)})
            tx = T.get_thread_binding()
            T.copy(SFA[0:bM], SFA_s)
            T.copy(SFB[0:bN], SFB_s)
            for i in T.serial(K // bK):
                T.copy(A[0:bM, i * bK:(i + 1) * bK], A_s)
                T.copy(B[i * bK:(i + 1) * bK, 0:bN], B_s)
                if tx < 32:
                    T.tcgen05_cp_warpx4(SFA_s, SFA_tmem)
                    T.tcgen05_cp_warpx4(SFB_s, SFB_tmem)
                    T.tcgen05_gemm_blockscaled(A_s, B_s, C_tmem, SFA_tmem, SFB_tmem, mbar=done, clear_accum=i == 0,
                                               k_start=i * bK, sf_a_granularity_k=gran, sf_b_granularity_k=gran)
                T.mbarrier_wait_parity(done, i % 2)
            T.copy(C_tmem, C_l)
            T.copy(C_l, C)

    assert blockscaled_gemm  # the module's kernels share SM100
    ptx = compile_artifact(tilelang.lower(k, target=SM100)).ptx
    assert "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale" in ptx
    assert "tcgen05.ld.sync.aligned.32x32b" in ptx


def test_a_tmem_layout_the_backend_does_not_store_is_refused():
    from test_tcgen05_pair_blockscaled import SM100

    from tilelang.errors import LoweringError

    @T.prim_func
    def k(C: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128):
            C_tmem = T.alloc_tmem([128, 64], "float32")
            T.annotate_layout({C_tmem: lambda i, j: (i, 63 - j)})
            T.copy(C_tmem, C)

    with pytest.raises(LoweringError, match="stores row i on datapath i"):
        tilelang.lower(k, target=SM100)
