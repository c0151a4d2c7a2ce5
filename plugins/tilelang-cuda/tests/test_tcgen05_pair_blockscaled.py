"""Blackwell's CTA-pair (``cta_group::2``) and block-scaled tcgen05 constructs, compiled for sm_100a with nvcc:

- ``T.tcgen05_gemm(use_2cta=True)`` (one M=256 ``tcgen05.mma.cta_group::2`` issued by the even CTA, each CTA holding
  half of B's N columns), ``T.tcgen05_mma_arrive(arrive_2cta=True)`` (the multicast commit), TMEM allocated per pair,
  ``T.tma_copy`` on a cluster barrier (the ``cta_group::2`` copy completing on CTA 0's barrier, which expects the
  pair's bytes) and ``T.tma_load_2sm``;
- ``T.tcgen05_gemm_blockscaled`` (``kind::mxf8f6f4.block_scale``, E8M0 scale factors in TMEM, per-K32 scale-factor
  ids in the instruction descriptor), ``T.tcgen05_cp_warpx4(use_2cta=True)``;
- the raw ``T.ptx_tcgen05_mma_ss`` / ``_ts`` / ``_blockscaled_ss`` forms (``.ws``, ``cta_group::2``, lane masks);
- ``T.use_swizzle`` in a cluster kernel keeps each block's place in its cluster (a CTA pair shares its B columns);
  ``T.assume`` compiles for CUDA.

The reference's refusals are kept: ``use_2cta`` outside a (2, 1, 1) / (1, 2, 1) cluster, ``.ws`` with
``cta_group::2``. Running the kernels needs an sm_100 GPU (``gpu`` marker).
"""

from __future__ import annotations

import re

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

SM100 = {"kind": "cuda", "arch": "sm_100a"}


def _ptx(prim_func) -> str:
    from tilelang_cuda.compiler import compile_artifact

    return compile_artifact(tilelang.lower(prim_func, target=SM100)).ptx


def _source(prim_func) -> str:
    return tilelang.lower(prim_func, target=SM100).kernel_source


# ------------------------------------------------------------------------------------------------ kernels
def pair_gemm(M=512, N=512, K=256, block_M=128, block_N=256, block_K=64, stages=2, cluster=2, swizzle=0):
    """The reference example's gemm_2cta: a CTA pair computes a 256 x block_N tile, each CTA loading half of B."""
    half = block_N // 2

    @T.prim_func
    def k(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((K, N), "bfloat16"), C: T.Tensor((M, N), "bfloat16")):
        with T.ClusterKernel(M // block_M, N // block_N, threads=128, cluster_dims=cluster) as (bx, by):
            A_s = T.alloc_shared((stages, block_M, block_K), "bfloat16")
            B_s = T.alloc_shared((stages, block_K, half), "bfloat16")
            C_tmem = T.alloc_tmem([block_M, block_N], "float32")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_cluster_barrier([64] * stages)
            consumed = T.alloc_cluster_barrier([1] * stages)
            full = T.alloc_barrier([1])
            tx = T.get_thread_binding()
            rank = T.block_rank_in_cluster()
            T.assume(rank < 2)
            if swizzle:
                T.use_swizzle(swizzle)
            if tx < 32:
                for i in T.serial(K // block_K):
                    T.mbarrier_wait_parity(consumed[i % stages], ((i // stages) & 1) ^ 1)
                    T.tma_copy(A[bx * block_M:(bx + 1) * block_M, i * block_K:(i + 1) * block_K], A_s[i % stages, :, :],
                               barrier=loaded[i % stages])
                    T.tma_copy(B[i * block_K:(i + 1) * block_K, (by * 2 + rank) * half:(by * 2 + rank + 1) * half],
                               B_s[i % stages, :, :], barrier=loaded[i % stages])
                    T.mbarrier_arrive(loaded[i % stages], 0)
            elif rank == 0 and tx < 64:
                for i in T.serial(K // block_K):
                    T.mbarrier_wait_parity(loaded[i % stages], (i // stages) & 1)
                    T.tcgen05_gemm(A_s[i % stages, :, :], B_s[i % stages, :, :], C_tmem, mbar=consumed[i % stages],
                                   clear_accum=i == 0, use_2cta=True)
                T.tcgen05_mma_arrive(full, arrive_2cta=True)
            T.mbarrier_wait_parity(full, 0)
            T.copy(C_tmem, C_l)
            T.copy(C_l, C[bx * block_M, by * block_N])
    return k


def blockscaled_gemm(pair: bool, M=256, N=512, K=512, block_M=128, block_N=256, block_K=128, stages=2, gran=128,
                     a_dtype="float8_e4m3fn", b_k_major=False):
    """The reference example's MXFP8 GEMM (1-CTA, or a CTA pair): scale factors packed four per word, transposed
    in shared memory by warp 2, copied to TMEM by the MMA warp every 4 * gran / block_K K tiles. With ``a_dtype``
    packed FP4 and ``b_k_major`` (B as (N, K), ``transpose_B``): the DeepSeek-V4 example's MXFP4 x MXFP8 GEMM, A
    loaded into a ``T.float4_e2m1_unpacked`` tile."""
    half = block_N // 2 if pair else block_N
    a_tile = T.float4_e2m1_unpacked if str(a_dtype) == "float4_e2m1fn" else a_dtype
    b_shape, b_tile = ((N, K), (stages, half, block_K)) if b_k_major else ((K, N), (stages, block_K, half))
    period = gran * 4 // block_K
    groups = (K // gran + 3) // 4

    @T.prim_func
    def k(A: T.Tensor((M, K), a_dtype), B: T.Tensor(b_shape, "float8_e4m3fn"),
          SFA: T.Tensor((groups * M,), "uint32"), SFB: T.Tensor((groups * N,), "uint32"),
          C: T.Tensor((M, N), "bfloat16")):
        with T.ClusterKernel(M // block_M, N // block_N, threads=128, cluster_dims=2 if pair else 1) as (bx, by):
            rank = T.block_rank_in_cluster() if pair else 0
            A_s = T.alloc_shared((stages, block_M, block_K), a_tile)
            B_s = T.alloc_shared(b_tile, "float8_e4m3fn")
            SFA_s = T.alloc_shared((stages, block_M), "uint32")
            SFB_s = T.alloc_shared((stages, block_N), "uint32")
            C_tmem = T.alloc_tmem([block_M, block_N], "float32")
            SFA_tmem = T.alloc_tmem([block_M, 4], "uint32")
            SFB_tmem = T.alloc_tmem([block_M, block_N // 128 * 4], "uint32")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            loaded = T.alloc_barrier([32] * stages)
            sf_full = T.alloc_cluster_barrier([32 * (2 if pair else 1)] * stages)
            consumed = T.alloc_cluster_barrier([1] * stages)
            full = T.alloc_barrier([1])
            tx = T.get_thread_binding()
            if tx < 32:
                for i in T.serial(K // block_K):
                    T.mbarrier_wait_parity(consumed[i % stages], ((i // stages) & 1) ^ 1)
                    T.tma_copy(A[bx * block_M:(bx + 1) * block_M, i * block_K:(i + 1) * block_K], A_s[i % stages, :, :],
                               barrier=loaded[i % stages])
                    n0 = by * block_N + rank * half
                    if b_k_major:
                        T.tma_copy(B[n0:n0 + half, i * block_K:(i + 1) * block_K], B_s[i % stages, :, :],
                                   barrier=loaded[i % stages])
                    else:
                        T.tma_copy(B[i * block_K:(i + 1) * block_K, n0:n0 + half], B_s[i % stages, :, :],
                                   barrier=loaded[i % stages])
                    if i % period == 0:
                        g = i // period
                        T.tma_copy(SFA[g * M + bx * block_M:g * M + (bx + 1) * block_M], SFA_s[i % stages, :],
                                   barrier=loaded[i % stages])
                        T.tma_copy(SFB[g * N + by * block_N:g * N + (by + 1) * block_N], SFB_s[i % stages, :],
                                   barrier=loaded[i % stages])
                    T.mbarrier_arrive(loaded[i % stages])
            elif tx < 64:
                if rank == 0:
                    for i in T.serial(K // block_K):
                        T.mbarrier_wait_parity(sf_full[i % stages], (i // stages) & 1)
                        if i % period == 0:
                            T.tcgen05_cp_warpx4(SFA_s[i % stages, :], SFA_tmem, use_2cta=pair)
                            T.tcgen05_cp_warpx4(SFB_s[i % stages, :], SFB_tmem, use_2cta=pair)
                        T.tcgen05_gemm_blockscaled(A_s[i % stages, :, :], B_s[i % stages, :, :], C_tmem, SFA_tmem,
                                                   SFB_tmem, transpose_B=b_k_major, mbar=consumed[i % stages],
                                                   clear_accum=i == 0,
                                                   k_start=i * block_K, sf_a_granularity_k=gran,
                                                   sf_b_granularity_k=gran, use_2cta=pair)
                    T.tcgen05_mma_arrive(full, arrive_2cta=pair)
            elif tx < 96:
                for i in T.serial(K // block_K):
                    T.mbarrier_wait_parity(loaded[i % stages], (i // stages) & 1)
                    if i % period == 0:
                        T.tcgen05_sf_warp_transpose(SFA_s[i % stages, :])
                        T.tcgen05_sf_warp_transpose(SFB_s[i % stages, :])
                        T.fence_proxy_async()
                    if pair:
                        T.mbarrier_arrive(sf_full[i % stages], 0)
                    else:
                        T.mbarrier_arrive(sf_full[i % stages])
            T.mbarrier_wait_parity(full, 0)
            T.copy(C_tmem, C_l)
            T.copy(C_l, C[bx * block_M, by * block_N])
    return k


def raw_mmas(pair: bool):
    """The raw instruction forms on a hand-made descriptor: one CTA (SS with lane masks, .ws, TS, block-scaled) or
    a CTA pair (SS and block-scaled, cta_group::2); ptxas refuses a kernel that mixes the two CTA groups."""
    @T.prim_func
    def k(A: T.Tensor((128, 64), "bfloat16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2):
            A_s = T.alloc_shared((128, 64), "bfloat16")
            C_tmem = T.alloc_tmem([128, 128], "float32")
            A_tmem = T.alloc_tmem([128, 32], "float32")
            SF_tmem = T.alloc_tmem([128, 4], "uint32")
            desc = T.alloc_tcgen05_smem_desc()
            T.initialize_tcgen05_descriptor(desc, T.access_ptr(A_s[0, 0], "r"), 1, 64, swizzle_mode=2)
            tx = T.get_thread_binding()
            if tx < 32:
                if pair:
                    T.ptx_tcgen05_mma_ss("bfloat16", desc.data, 0, desc.data, 0, C_tmem.data, 0, 0x10200490, 1,
                                         enable_2cta=True)
                    T.ptx_tcgen05_mma_blockscaled_ss("float8_e4m3", desc.data, 0, desc.data, 0, C_tmem.data, 0,
                                                     0x10900000, 1, SF_tmem.data, 0, SF_tmem.data, 2,
                                                     enable_2cta=True)
                else:
                    T.ptx_tcgen05_mma_ss("bfloat16", desc.data, 0, desc.data, 32, C_tmem.data, 0, 0x08100490, 0,
                                         0xFFFF, 0, 0, 0)
                    T.ptx_tcgen05_mma_ss("bfloat16", desc.data, 0, desc.data, 0, C_tmem.data, 0, 0x08100490, 1,
                                         enable_ws=True)
                    T.ptx_tcgen05_mma_ts("bfloat16", A_tmem.data, 0, desc.data, 0, C_tmem.data, 0, 0x08100490, 1)
                    T.ptx_tcgen05_mma_blockscaled_ss("float8_e4m3", desc.data, 0, desc.data, 0, C_tmem.data, 0,
                                                     0x08900000, 1, SF_tmem.data, 0, SF_tmem.data, 2)
            A[0, 0] = A_s[0, 0]
    return k


def tma_load_2sm():
    @T.prim_func
    def k(A: T.Tensor((256, 64), "bfloat16"), B: T.Tensor((256, 64), "bfloat16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2) as bx:
            A_s = T.alloc_shared((128, 64), "bfloat16")
            bar = T.alloc_cluster_barrier([1])
            tx = T.get_thread_binding()
            if tx == 0:
                T.tma_load_2sm(T.create_tma_descriptor(10, 2, A.data, 64, 256, 128, 128, 64, 128, 1, 1, 0, 0, 0, 0),
                               bar[0], T.access_ptr(A_s[0, 0], "w"), 0, T.block_rank_in_cluster() * 128)
            B[bx * 128 + tx, 0] = A_s[tx, 0]
    return k


# ------------------------------------------------------------------------------------------------ PTX
@needs_nvcc
def test_pair_gemm_issues_cta_group_2_from_the_even_cta():
    ptx = _ptx(pair_gemm())
    for instr in ("tcgen05.alloc.cta_group::2", "tcgen05.mma.cta_group::2.kind::f16",
                  "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster",
                  "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes",
                  "tcgen05.dealloc.cta_group::2", "barrier.cluster.arrive"):
        assert instr in ptx, instr
    assert "cta_group::1" not in ptx


def test_pair_gemm_instruction_and_leader_expectations():
    src = _source(pair_gemm())
    # M = 256 (the pair), N = 256 (C's columns, B's halves in the two CTAs), bf16, B MN-major: the reference's value
    assert "(uint)272696464" in src
    # only CTA 0 expects the bytes: 2 CTAs x (A 128x64 + B 64x128) bf16 boxes, 32768 bytes per T.tma_copy
    assert re.search(r"if \(tl_cluster_ctarank\(\) == 0\) \{\s*tl_mbarrier_expect_tx\([^;]*, 32768\);", src)
    assert re.search(r"tl_cluster_ctarank\(\) == 0\) && \(\(\(int\)threadIdx.x\) == 32\)\) \{", src)


def test_use_swizzle_keeps_cta_pairs_in_their_cluster():
    src = _source(pair_gemm(M=1024, N=1024, swizzle=4))
    by = re.search(r"int by_swizzled = (.*);", src).group(1)
    bx = re.search(r"int bx_swizzled = (.*);", src).group(1)
    assert "blockIdx.x) >> 1" in by and "blockIdx.x) & 1" not in by  # a pair shares its B columns
    assert "* 2) + (((int)blockIdx.x) & 1))" in bx  # and keeps its rank's rows


@needs_nvcc
@pytest.mark.parametrize("pair", [False, True], ids=["one_cta", "cta_pair"])
def test_blockscaled_gemm_issues_block_scale_mmas(pair):
    ptx = _ptx(blockscaled_gemm(pair))
    group = "2" if pair else "1"
    assert f"tcgen05.mma.cta_group::{group}.kind::mxf8f6f4.block_scale" in ptx
    assert f"tcgen05.cp.cta_group::{group}.32x128b.warpx4" in ptx
    assert f"tcgen05.alloc.cta_group::{group}" in ptx


def test_blockscaled_descriptor_carries_the_scale_factor_ids():
    src = _source(blockscaled_gemm(True))
    # M = 256, N = 256, e4m3 x e4m3, B MN-major, E8M0 scales: the reference's 281083904; per K32 step the SF ids
    # ((k_start + 32 j) // 128) % 4 go to bits 29-30 (A) and 4-5 (B)
    ids = r"\(uint\)281083904 \| \(\(\(uint\)i_1\) << \(uint\)29\)\) \| \(\(\(uint\)i_1\) << \(uint\)4\)"
    assert re.search(ids, src)


@pytest.mark.parametrize("pair", [False, True], ids=["one_cta", "cta_pair"])
def test_tmem_permit_is_relinquished_after_the_last_allocation(pair):
    """Three TMEM tiles (C, SFA, SFB): no tcgen05.alloc may follow tcgen05.relinquish_alloc_permit."""
    body = _source(blockscaled_gemm(pair)).split('extern "C" __global__')[-1]
    calls = re.findall(r"tl_tmem_(alloc|relinquish)\w*\(", body)
    assert calls == ["alloc", "alloc", "alloc", "relinquish"]


def test_blockscaled_descriptor_fields():
    from tilelang_cuda.tileops.dialect.tensorcore import blockscaled_descriptor

    d = blockscaled_descriptor(128, 256, "float8_e5m2", "float8_e4m3fn", True, False)
    assert (d >> 7) & 7 == 1 and (d >> 10) & 7 == 0  # A e5m2, B e4m3
    assert (d >> 15) & 1 == 0 and (d >> 16) & 1 == 1  # A K-major, B MN-major
    assert (d >> 17) & 0x3F == 256 >> 3 and (d >> 24) & 0x1F == 128 >> 4 and (d >> 23) & 1 == 1
    assert d & (3 << 4) == 0 and d & (3 << 29) == 0


@needs_nvcc
def test_raw_tcgen05_one_cta_forms():
    ptx = _ptx(raw_mmas(False))
    for instr in ("tcgen05.mma.cta_group::1.kind::f16", "tcgen05.mma.ws.cta_group::1.kind::f16",
                  "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale", "tcgen05.alloc.cta_group::1", "elect.sync"):
        assert instr in ptx, instr
    src = _source(raw_mmas(False))
    assert "65535" in src and "tl_tcgen05_mma_ts_f16_masked" in src  # the lane mask reaches the one-CTA form


@needs_nvcc
def test_raw_tcgen05_pair_forms():
    ptx = _ptx(raw_mmas(True))
    for instr in ("tcgen05.mma.cta_group::2.kind::f16", "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale",
                  "tcgen05.alloc.cta_group::2"):
        assert instr in ptx, instr
    assert "cta_group::1" not in ptx


@needs_nvcc
def test_tma_load_2sm():
    ptx = _ptx(tma_load_2sm())
    assert "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx


def test_cluster_barrier_loads_keep_the_one_cta_form_before_blackwell():
    """The pair form of a TMA load is the reference's sm_100 lowering of a cluster barrier; Hopper keeps its own."""
    @T.prim_func
    def k(A: T.Tensor((256, 64), "bfloat16"), B: T.Tensor((256, 64), "bfloat16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2) as bx:
            A_s = T.alloc_shared((128, 64), "bfloat16")
            bar = T.alloc_cluster_barrier([1])
            T.tma_copy(A[bx * 128:(bx + 1) * 128, 0:64], A_s, barrier=bar[0])
            T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            T.copy(A_s, B[bx * 128:(bx + 1) * 128, 0:64])

    hopper = tilelang.lower(k, target={"kind": "cuda", "arch": "sm_90a"}).kernel_source
    assert "tl_tma_copy_load_2d(" in hopper and "tl_tma_copy_load_2sm" not in hopper
    assert "tl_tma_copy_load_2sm_2d(" in _source(k)


def test_assume_compiles_for_cuda():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            T.assume(tx < 128)
            A[tx] = 1.0

    src = tilelang.lower(k, target={"kind": "cuda", "arch": "sm_80"}).kernel_source
    assert "assume" not in src.split("extern \"C\" __global__")[-1]


# ------------------------------------------------------------------------------------------------ refusals
def test_pair_gemm_needs_a_pair_cluster():
    with pytest.raises(LoweringError, match=r"use_2cta=True\) requires cluster_dims \(2,1,1\) or \(1,2,1\)"):
        tilelang.lower(pair_gemm(cluster=4, M=512), target=SM100)


def test_pair_gemm_needs_half_of_b_per_cta():
    @T.prim_func
    def k(A: T.Tensor((256, 64), "bfloat16"), B: T.Tensor((64, 256), "bfloat16")):
        with T.ClusterKernel(2, threads=128, cluster_dims=2):
            A_s = T.alloc_shared((128, 64), "bfloat16")
            B_s = T.alloc_shared((64, 256), "bfloat16")
            C_tmem = T.alloc_tmem([128, 256], "float32")
            bar = T.alloc_barrier([1])
            T.tcgen05_gemm(A_s, B_s, C_tmem, mbar=bar[0], use_2cta=True)

    with pytest.raises(LoweringError, match=r"each CTA holding N/2 columns of B; got C's N=256 and B's N=256"):
        tilelang.lower(k, target=SM100)


def test_ws_and_pair_forms_exclude_each_other():
    with pytest.raises(ValueError, match="enable_ws and enable_2cta cannot be true at the same time"):
        T.ptx_tcgen05_mma_ss("bfloat16", 0, 0, 0, 0, 0, 0, 0, 0, enable_ws=True, enable_2cta=True)


def test_blockscaled_gemm_refuses_16_bit_operands():
    @T.prim_func
    def k(A: T.Tensor((128, 64), "bfloat16")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((128, 64), "bfloat16")
            B_s = T.alloc_shared((64, 128), "bfloat16")
            C_tmem = T.alloc_tmem([128, 128], "float32")
            SF = T.alloc_tmem([128, 4], "uint32")
            T.tcgen05_gemm_blockscaled(A_s, B_s, C_tmem, SF, SF, k_start=0, sf_a_granularity_k=32,
                                       sf_b_granularity_k=32)

    with pytest.raises(LoweringError, match=r"FP8 \(e4m3 / e5m2\) operands .*kind::mxf8f6f4.*bfloat16"):
        tilelang.lower(k, target=SM100)


# ------------------------------------------------------------------------------------------------ device
@pytest.mark.gpu
def test_pair_gemm_runs_on_blackwell():
    import torch

    if torch.cuda.get_device_capability()[0] != 10:
        pytest.skip("needs an sm_100 GPU")
    kernel = tilelang.compile(pair_gemm(), target=SM100)
    a = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(512, 512, device="cuda", dtype=torch.bfloat16)
    kernel(a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
