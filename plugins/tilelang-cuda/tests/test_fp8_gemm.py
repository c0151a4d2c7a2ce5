"""FP8 GEMM (e4m3 / e5m2, either mix) on tensor cores.

sm_90a: ``wgmma.mma_async.m64nNk32`` with both operands read through 64-byte swizzled descriptors from their
K-major shared tiles (the reference's example, `benchmarks/sass_kernels.gemm_fp8`); other sm_89+ targets and
tiles wgmma cannot read through a descriptor: ``mma.sync.m16n8k32`` in the same register layout. Before, every
fp8 ``T.gemm`` fell back to the scalar FMA loop nest. sm_80 has no fp8 tensor-core instruction: a LoweringError
says so (the reference 0.1.15 builds an SM89 CuTe MMA there that compiles to no MMA instruction, and the scalar
path failed inside TVM). ``T.gemm`` takes one operand dtype (as the reference, which refuses e4m3 x e5m2);
``T.wgmma_gemm`` takes a mix. Numerics run through the SIMT emulator (`cuda_emulator`) against torch.
"""

from __future__ import annotations

import functools
import re
import warnings

import pytest
import torch
from cuda_emulator import emulate, fp8_decode
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError, LoweringError

TORCH = {"float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
PTX = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
SAME = [("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2")]
MIXED = [("float8_e4m3fn", "float8_e5m2"), ("float8_e5m2", "float8_e4m3fn")]


def fp8_gemm(a_dtype: str, b_dtype: str, M: int = 128, N: int = 128, K: int = 128, block_M: int = 128,
             block_N: int = 128, block_K: int = 64, stages: int = 2, threads: int = 128,
             out_dtype: str = "float32"):
    """C = A @ B^T with A (M x K) and B (N x K) both K-major, as the reference's fp8 example; mixed operand
    dtypes through ``T.wgmma_gemm`` (``T.gemm`` wants one)."""
    mixed = a_dtype != b_dtype

    @T.prim_func
    def main(A: T.Tensor((M, K), a_dtype), B: T.Tensor((N, K), b_dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), a_dtype)
            B_s = T.alloc_shared((block_N, block_K), b_dtype)
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                if mixed:
                    T.wgmma_gemm(A_s, B_s, C_f, transpose_B=True)
                    T.wait_wgmma(0)
                else:
                    T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


@functools.cache
def _lowered(arch: str, a_dtype: str, b_dtype: str, configs: tuple = (), **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(fp8_gemm(a_dtype, b_dtype, **kw), target={"kind": "cuda", "arch": arch},
                              pass_configs=dict(configs) or None)


def _kernel_source(art) -> str:
    src = art.kernel_source
    return src[src.index('extern "C" __global__'):]


def _run(art, a_dtype: str, b_dtype: str, M: int = 128, N: int = 128, K: int = 128, **_):
    gen = torch.Generator().manual_seed(0)
    a = (torch.randn(M, K, generator=gen) * 2).to(TORCH[a_dtype])
    b = (torch.randn(N, K, generator=gen) * 2).to(TORCH[b_dtype])
    c = torch.zeros(M, N)
    stats = emulate(art, a, b, c)
    ref = a.float() @ b.float().T
    assert ref.abs().max() > 1
    torch.testing.assert_close(c, ref, atol=1e-3, rtol=1e-4)
    return stats


def test_fp8_decode_matches_torch():
    raw = torch.arange(256, dtype=torch.uint8)
    for dtype, kind in PTX.items():
        want = raw.view(TORCH[dtype]).double().numpy()
        got = fp8_decode(raw.numpy(), kind)
        assert ((got == want) | (torch.isnan(torch.from_numpy(got)) & torch.isnan(torch.from_numpy(want))).numpy()
                ).all(), kind


@needs_nvcc
@pytest.mark.parametrize("a_dtype,b_dtype", SAME + MIXED)
def test_sm90a_fp8_gemm_is_wgmma_with_fp8_operands(a_dtype, b_dtype):
    art = _lowered("sm_90a", a_dtype, b_dtype)
    assert art.files["kernel.cubin"][:4] == b"\x7fELF"
    ptx = art.files["kernel.ptx"].decode()
    a, b = PTX[a_dtype], PTX[b_dtype]
    found = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k32\.f32\.(e\dm\d)\.(e\dm\d)", ptx))
    assert found == {("128", a, b)}, found
    assert not re.search(r"^\s*mma\.sync", ptx, re.M)  # no mma.sync fallback
    assert art.metadata["ptxas"]["spill_stores"] == 0 and art.metadata["ptxas"]["stack_bytes"] == 0
    src = _kernel_source(art)
    # both operands through 64-byte swizzled descriptors of their K-major tiles (mode 2, SBO 8 rows of 64 B)
    assert re.findall(r"tl_wgmma_desc_sw\([^;]*?, 16, 512, 2\)", src)
    stats = _run(art, a_dtype, b_dtype)
    assert stats["wgmma"] > 0


@needs_nvcc
def test_the_benchmarks_fp8_gemm_config_has_no_spills():
    # the reference's example configuration (benchmarks/sass_kernels.gemm_fp8: 128x128x64, 3 stages, fp16 out)
    art = _lowered("sm_90a", "float8_e4m3fn", "float8_e4m3fn", M=512, N=512, K=512, stages=3,
                   out_dtype="float16")
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" in art.files["kernel.ptx"].decode()
    ptxas = art.metadata["ptxas"]
    assert ptxas["spill_stores"] == ptxas["spill_loads"] == ptxas["stack_bytes"] == 0, ptxas


def test_sm90a_fp8_gemm_numerics_with_two_warpgroups_and_three_stages():
    art = _lowered("sm_90a", "float8_e4m3fn", "float8_e5m2", M=256, N=128, K=256, block_K=64, stages=3,
                   threads=256)
    assert "tl_wgmma_ss_m64n128k32_e4m3e5m2_t00(" in _kernel_source(art)
    _run(art, "float8_e4m3fn", "float8_e5m2", M=256, N=128, K=256)


@pytest.mark.parametrize("arch,configs", [("sm_89", ()), ("sm_90a", (("tl.cuda.enable_wgmma_ss", False),))])
@pytest.mark.parametrize("a_dtype,b_dtype", SAME)
def test_fp8_gemm_without_descriptors_is_mma_sync(arch, configs, a_dtype, b_dtype):
    art = _lowered(arch, a_dtype, b_dtype, configs)
    src = _kernel_source(art)
    assert f"tl_mma_sync_m16n8k32_{PTX[a_dtype]}_{PTX[b_dtype]}_fp32(" in src and "wgmma" not in src
    stats = _run(art, a_dtype, b_dtype)
    assert stats["mma"] > 0


@needs_nvcc
def test_sm89_fp8_gemm_ptx_is_mma_sync_e4m3():
    art = _lowered("sm_89", "float8_e4m3fn", "float8_e4m3fn")
    assert "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32" in art.files["kernel.ptx"].decode()


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_sm80_fp8_gemm_is_refused_naming_the_arch(dtype):
    with pytest.raises(LoweringError) as info:
        _lowered("sm_80", dtype, dtype)
    msg = str(info.value)
    assert f"T.gemm with {dtype} operands needs fp8 tensor cores (sm_89 or newer)" in msg
    assert "target arch sm_80 has none" in msg and "float16 or bfloat16" in msg


def test_t_gemm_refuses_mixed_fp8_operands_as_the_reference():
    with pytest.raises(KernelTypeError, match="both operands must have the same dtype"):
        T.prim_func(_mixed_t_gemm)


def _mixed_t_gemm(A: T.Tensor((64, 32), "float8_e4m3fn"), B: T.Tensor((64, 32), "float8_e5m2"),
                  C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128):
        A_s = T.alloc_shared((64, 32), "float8_e4m3fn")
        B_s = T.alloc_shared((64, 32), "float8_e5m2")
        C_f = T.alloc_fragment((64, 64), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.gemm(A_s, B_s, C_f, transpose_B=True, clear_accum=True)
        T.copy(C_f, C)


def test_fp8_gemm_with_a_transposed_operand_is_not_a_tensor_core_gemm():
    # fp8 tensor-core operands are K-major only (wgmma has no transpose for 8-bit types): B stored K x N
    @T.prim_func
    def main(A: T.Tensor((128, 64), "float8_e4m3fn"), B: T.Tensor((64, 128), "float8_e4m3fn"),
             C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, 1, threads=128):
            A_s = T.alloc_shared((128, 64), "float8_e4m3fn")
            B_s = T.alloc_shared((64, 128), "float8_e4m3fn")
            C_f = T.alloc_fragment((128, 128), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, C_f, clear_accum=True)
            T.copy(C_f, C)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(main, target={"kind": "cuda", "arch": "sm_90a"})
    src = _kernel_source(art)
    assert "wgmma_ss" not in src and "tl_mma_sync" not in src
