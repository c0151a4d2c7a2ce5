"""Low-precision CPU GEMMs: AMX tiles (`tilelang_cpu.tileops.gemm_amx`), vector dot products
(`tilelang_cpu.tileops.gemm_dot`) and the VNNI packing of B (`tilelang_cpu.gemm_vnni_pack`).

Which lowering serves which target comes from the target's LLVM CPU features: checked for named CPUs through the
generated assembly (``tdpbf16ps`` for ``mcpu=sapphirerapids``, ``vdpbf16ps`` without ``amx-tile``, ...), whatever
the host is. Results are compared with torch by running the kernels where the host has the instructions (tests
skip cleanly elsewhere): bf16 and int8, aligned shapes and every kind of tail, transposed operands, the
reference-style program (``T.alloc_shared`` + ``T.alloc_fragment`` + ``T.Pipelined`` + ``T.gemm``) and its
``@tilelang.jit`` form.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from typing import Any

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.testing.corpus import gemm
from tilelang_cpu.isa import DotUnits, dot_units, dot_units_from_features

HOST = dot_units({"kind": "llvm"})
HOST_TARGET = {"kind": "llvm"}
NO_AMX = {"kind": "llvm", "mattr": ["-amx-tile"]}  # the host's CPU with AMX switched off: the dot products
VNNI_256 = {"kind": "llvm", "mattr": ["-avx512f", "-amx-tile"]}  # AVX2 + AVX-VNNI where the host has it

needs_amx_bf16 = pytest.mark.skipif(not HOST.amx_bf16, reason="the host has no AMX-BF16")
needs_amx_int8 = pytest.mark.skipif(not HOST.amx_int8, reason="the host has no AMX-INT8")
needs_avx512_bf16 = pytest.mark.skipif(not HOST.avx512_bf16, reason="the host has no AVX512-BF16")
needs_vnni_512 = pytest.mark.skipif(HOST.vnni != 512, reason="the host has no AVX512-VNNI")
needs_avx_vnni = pytest.mark.skipif(not dot_units(VNNI_256).vnni, reason="the host has no AVX-VNNI")

# (M, N, K, block_M, block_N, block_K): aligned; grid overhang with K steps past K; micro-tile row / column /
# K tails (50 rows = 32 + 16 + 2, 40 columns = 32 + 8, K 96 in steps of 24); one block, N = 200 (3 pairs + 8)
SHAPES = [(256, 256, 256, 128, 128, 64), (200, 136, 72, 64, 64, 32), (150, 120, 96, 50, 40, 24),
          (96, 200, 64, 96, 200, 64)]
SHAPE_IDS = ["aligned", "overhang", "tails", "one-block"]


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _inputs(ck: Any, seed: int = 0) -> list[torch.Tensor]:
    """Inputs spanning the whole int8 range for int8 kernels (the corpus' randn would stay within +-4)."""
    if ck.args[0].dtype != "int8":
        return ck.make_inputs(seed)
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(-128, 128, a.shape, generator=g, dtype=torch.int8) for a in ck.inputs]


def _check(ck: Any, target: Any, chosen: list[str] | None = None, impl: str | None = None,
           configs: dict[str, Any] | None = None) -> Any:
    """Compile `ck` for `target`, run it, compare with a float64 (int: exact int64) product."""
    kernel = tilelang.compile(ck.func, target=target, pass_configs=configs)
    inputs, outputs = _inputs(ck), ck.make_outputs()
    kernel(*inputs, *outputs)
    a, b = inputs
    ta, tb = ck.name.startswith("gemm_t"), ck.name[6:7] == "t"
    a, b = (a.T if ta else a), (b.T if tb else b)
    if a.dtype == torch.int8:
        assert torch.equal(outputs[0].long(), a.long() @ b.long())
    else:
        exact = a.double() @ b.double()
        out_dtype = outputs[0].dtype
        # fp32 output: products exact, sums in fp32; a bf16 output rounds the fp32 sum once
        tol = 2e-2 * exact.abs().max().item() if out_dtype == torch.bfloat16 else 2e-5 * a.shape[1] ** 0.5
        torch.testing.assert_close(outputs[0].double(), exact, atol=tol, rtol=1e-2 if out_dtype ==
                                   torch.bfloat16 else 1e-5)
    if impl is not None:
        assert chosen and set(chosen) == {impl}
    return kernel


@pytest.fixture
def chosen(tile_op_choices: Any) -> list[str]:
    return tile_op_choices("tl.gemm")


def _asm(ck: Any, target: Any, configs: dict[str, Any] | None = None) -> str:
    return str(tilelang.lower(ck.func, target=target, pass_configs=configs).rt_mod.inspect_source("asm"))


BF16_FMA = {"tl.cpu.gemm_avx512_bf16": False}  # opts out of the AVX512-BF16 path: the fp32 micro-kernel


# ------------------------------------------------------------------------------------------------ selection
@pytest.mark.parametrize(("features", "expected"), [
    ({"amx-tile", "amx-bf16", "amx-int8", "avx512f", "avx512bf16", "avx512vnni", "avxvnni"},
     DotUnits(amx_bf16=True, amx_int8=True, avx512_bf16=True, vnni=512)),
    ({"amx-bf16", "avx512f"}, DotUnits()),  # no amx-tile: no tile unit
    ({"avx512f", "avx512bf16", "avx512vnni"}, DotUnits(avx512_bf16=True, vnni=512)),  # znver4, cooperlake
    ({"avx2", "avxvnni", "avxvnniint8"}, DotUnits(vnni=256, vnni_int8=True)),  # sierraforest, arrowlake
    ({"avx2", "fma"}, DotUnits()),
])
def test_dot_units_from_features(features: set[str], expected: DotUnits) -> None:
    assert dot_units_from_features(frozenset(features)) == expected


@pytest.mark.parametrize(("config", "expected"), [
    ({"kind": "llvm", "mcpu": "sapphirerapids"}, DotUnits(True, True, False, True, 512, False)),
    ({"kind": "llvm", "mcpu": "graniterapids"}, DotUnits(True, True, True, True, 512, False)),
    ({"kind": "llvm", "mcpu": "sapphirerapids", "mattr": ["-amx-tile"]}, DotUnits(avx512_bf16=True, vnni=512)),
    ({"kind": "llvm", "mcpu": "znver4"}, DotUnits(avx512_bf16=True, vnni=512)),
    ({"kind": "llvm", "mcpu": "alderlake"}, DotUnits(vnni=256)),
    ({"kind": "llvm", "mcpu": "skylake-avx512"}, DotUnits()),
    ({"kind": "llvm", "mcpu": "haswell"}, DotUnits()),
    ({"kind": "c"}, DotUnits()),
    ({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "neoverse-v1"}, DotUnits()),
])
def test_dot_units_follow_the_targets_features_not_the_host(config: dict, expected: DotUnits) -> None:
    assert dot_units(config) == expected


BF16 = dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, dtype="bfloat16", out_dtype="float32")
INT8 = dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=64, dtype="int8", accum_dtype="int32",
            out_dtype="int32")


@pytest.mark.parametrize(("kw", "config", "present", "absent"), [
    (BF16, {"mcpu": "sapphirerapids"}, ["tdpbf16ps", "ldtilecfg", "tilerelease"], ["vdpbf16ps"]),
    (BF16, {"mcpu": "sapphirerapids", "mattr": ["-amx-tile"]}, ["vdpbf16ps"], ["tdpbf16ps", "ldtilecfg"]),
    (BF16, {"mcpu": "znver4"}, ["vdpbf16ps"], ["tdpbf16ps"]),
    (BF16, {"mcpu": "znver4", "off": True}, ["vfmadd231ps"], ["dpbf16ps"]),  # opted out
    (BF16, {"mcpu": "skylake-avx512"}, ["vfmadd231ps"], ["dpbf16ps"]),
    (BF16, {"mcpu": "haswell"}, ["vfmadd231ps"], ["dpbf16ps", "zmm"]),
    (INT8, {"mcpu": "sapphirerapids"}, ["tdpbssd", "ldtilecfg"], ["vpdpbusd"]),
    (INT8, {"mcpu": "icelake-server"}, [r"\tvpdpbusd\t.*%zmm"], ["tdpbssd"]),
    (INT8, {"mcpu": "alderlake"}, [r"\{vex\}\tvpdpbusd\t.*%ymm"], ["zmm", "tdpbssd"]),
    (INT8, {"mcpu": "sierraforest"}, [r"vpdpbssd\t.*%ymm"], ["vpdpbusd", "tdpbssd"]),
    (INT8, {"mcpu": "haswell"}, [], ["vpdpbusd", "vpdpbssd", "tdpbssd"]),
    (dict(BF16, dtype="float16"), {"mcpu": "graniterapids"}, ["tdpfp16ps"], ["tdpbf16ps"]),
    (dict(BF16, dtype="float16"), {"mcpu": "sapphirerapids"}, ["vfmadd231ps"], ["tdpfp16ps"]),
])
def test_assembly_holds_the_targets_instruction(kw: dict, config: dict, present: list[str],
                                                absent: list[str]) -> None:
    """Checked on the generated assembly for each CPU, whatever the host (SDE is not installable here)."""
    config = dict(config)
    configs = BF16_FMA if config.pop("off", False) else None
    asm = _asm(gemm(**kw), {"kind": "llvm", **config}, configs)
    for pattern in present:
        assert re.search(pattern, asm), pattern
    for pattern in absent:
        assert not re.search(pattern, asm), pattern


def test_fp16_on_a_host_without_amx_fp16_converts_to_fp32(chosen: list[str]) -> None:
    """AVX512-FP16 arithmetic accumulates in fp16; torch accumulates fp16 matmuls in fp32, so without AMX-FP16
    fp16 inputs take the fp32 micro-kernel (converted once), also on an AVX512-FP16 target."""
    _check(gemm(**dict(BF16, dtype="float16")), {"kind": "llvm", "mattr": ["-amx-fp16"]}, chosen,
           "cpu_micro_kernel")


# ------------------------------------------------------------------------------------------------ AMX results
@needs_amx_bf16
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_amx_bf16_matches_torch(chosen: list[str], shape: tuple[int, ...]) -> None:
    m, n, k, bm, bn, bk = shape
    _check(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="bfloat16", out_dtype="float32"),
           HOST_TARGET, chosen, "cpu_amx")


@needs_amx_int8
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_amx_int8_is_exact(chosen: list[str], shape: tuple[int, ...]) -> None:
    m, n, k, bm, bn, bk = shape
    _check(gemm(**{**INT8, "M": m, "N": n, "K": k, "block_M": bm, "block_N": bn, "block_K": bk}), HOST_TARGET,
           chosen, "cpu_amx")


@needs_amx_bf16
@pytest.mark.parametrize(("ta", "tb"), [(False, True), (True, False), (True, True)])
@pytest.mark.parametrize("dtype", ["bfloat16", "int8"])
def test_amx_transposed_operands(chosen: list[str], ta: bool, tb: bool, dtype: str) -> None:
    """Transposed A goes through zero-padded rows, transposed B through the element-wise VNNI pack; K = 100 ends
    with a partial tile step."""
    base = INT8 if dtype == "int8" else BF16
    if dtype == "int8" and not HOST.amx_int8:
        pytest.skip("the host has no AMX-INT8")
    _check(gemm(**{**base, "M": 130, "N": 70, "K": 100, "trans_A": ta, "trans_B": tb}), HOST_TARGET, chosen,
           "cpu_amx")


@needs_amx_bf16
@pytest.mark.parametrize("configs", [{"tl.cpu.gemm_prepack_limit": 0}, {"tl.cpu.gemm_prefetch": False},
                                     {"tl.cpu.gemm_k_block": 1}], ids=["per-call-pack", "no-prefetch", "k-steps"])
def test_amx_operand_forms(chosen: list[str], configs: dict[str, Any]) -> None:
    """B packed per call instead of once before the grid, no prefetches, and one gemm per K step of 32 (C
    tiles loaded from and stored to the fragment every step)."""
    ck = gemm(M=256, N=192, K=320, block_M=128, block_N=64, block_K=32, dtype="bfloat16", out_dtype="float32")
    _check(ck, HOST_TARGET, chosen, "cpu_amx", configs)


@needs_amx_bf16
def test_reference_style_bf16_program(chosen: list[str]) -> None:
    """The reference's own form -- bf16 in, bf16 out, an fp32 fragment -- against torch's bf16 matmul."""
    ck = gemm(M=512, N=384, K=256, block_M=128, block_N=128, block_K=32, dtype="bfloat16", num_stages=3)
    kernel = tilelang.compile(ck.func, target=HOST_TARGET)
    a, b = ck.make_inputs()
    c = torch.empty(512, 384, dtype=torch.bfloat16)
    kernel(a, b, c)
    torch.testing.assert_close(c, torch.matmul(a, b), atol=2e-2, rtol=2e-2)
    assert set(chosen) == {"cpu_amx"}


@needs_amx_bf16
def test_jit_quickstart_form_in_bf16(chosen: list[str]) -> None:
    """``@tilelang.jit`` with ``T.const`` shapes and ``T.empty`` output, bf16 inputs, fp32 fragment."""

    @tilelang.jit
    def matmul(A, B, block_M: int = 64, block_N: int = 64, block_K: int = 32):
        M, N, K = T.const("M, N, K")
        A: T.Tensor((M, K), T.bfloat16)
        B: T.Tensor((K, N), T.bfloat16)
        C = T.empty((M, N), T.float32)
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.bfloat16)
            B_shared = T.alloc_shared((block_K, block_N), T.bfloat16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])
        return C

    a, b = torch.randn(320, 192).bfloat16(), torch.randn(192, 256).bfloat16()
    c = matmul(a, b)
    torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-3, rtol=1e-4)
    assert "cpu_amx" in chosen


# ------------------------------------------------------------------------------------------------ dot products
@needs_avx512_bf16
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_avx512_bf16_matches_torch(chosen: list[str], shape: tuple[int, ...]) -> None:
    m, n, k, bm, bn, bk = shape
    _check(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="bfloat16", out_dtype="float32"),
           NO_AMX, chosen, "cpu_dot_product")


@needs_vnni_512
@pytest.mark.parametrize("shape", SHAPES[1:3], ids=SHAPE_IDS[1:3])
def test_avx512_vnni_int8_is_exact(chosen: list[str], shape: tuple[int, ...]) -> None:
    """vpdpbusd with A biased by 128 and the column sums of B subtracted; K = 72 / 96 leave partial words."""
    m, n, k, bm, bn, bk = shape
    _check(gemm(**{**INT8, "M": m, "N": n, "K": k, "block_M": bm, "block_N": bn, "block_K": bk}), NO_AMX, chosen,
           "cpu_dot_product")


@needs_vnni_512
@pytest.mark.parametrize(("ta", "tb", "k", "configs"), [
    (False, False, 200, None),  # row sums of A: three 64-byte slices and an 8-byte tail
    (False, False, 99, {"tl.cpu.gemm_prepack_limit": 0}),  # B biased in the per-call pack; a partial word
    (False, True, 130, None),  # transposed B biased element by element
    (False, False, 256, {"tl.cpu.gemm_k_block": 1}),  # C accumulated over the program's K steps
    (True, False, 99, None),  # transposed A: A biased per step, B's column sums
    (True, True, 64, {"tl.cpu.gemm_prepack_limit": 0}),
])
def test_avx512_vnni_int8_operand_forms(chosen: list[str], ta: bool, tb: bool, k: int,
                                        configs: dict[str, Any] | None) -> None:
    _check(gemm(**{**INT8, "M": 150, "N": 136, "K": k, "block_M": 64, "block_N": 128, "block_K": 32,
                   "trans_A": ta, "trans_B": tb}), NO_AMX, chosen, "cpu_dot_product", configs)


@pytest.mark.parametrize(("trans_a", "biased_a"), [(False, False), (True, True)])
def test_vnni_int8_biases_b_where_a_rows_are_contiguous(trans_a: bool, biased_a: bool) -> None:
    """vpdpbusd: with A's rows contiguous B is the unsigned operand, biased once in its pack, and A's word is
    broadcast straight from memory (no XOR with 0x80808080 per row and step); a transposed A keeps the bias."""
    asm = _asm(gemm(**{**INT8, "trans_A": trans_a}), {"kind": "llvm", "mcpu": "znver4"})
    assert re.search(r"\tvpdpbusd\t.*%zmm", asm)
    assert ("$-2139062144" in asm) == biased_a  # 0x80808080
    assert bool(re.search(r"\tvpbroadcastd\t-?\d*\(", asm)) == (not biased_a)


@pytest.mark.parametrize("dtype", ["int8", "bfloat16"])
@pytest.mark.parametrize("prefetch", [True, False])
def test_dot_products_prefetch_the_output_tile(dtype: str, prefetch: bool) -> None:
    """The int8 dot-product micro tiles prefetch the lines of the block's output tile (its final copy's
    read-for-ownership misses), as the fp32 micro-kernel does; ``tl.cpu.gemm_prefetch=False`` turns it off;
    bf16 (vdpbf16ps) does not (no gain measured)."""
    kw = INT8 if dtype == "int8" else BF16
    asm = _asm(gemm(**kw), {"kind": "llvm", "mcpu": "znver4"}, {"tl.cpu.gemm_prefetch": prefetch})
    assert re.search(r"dpb", asm)
    assert ("prefetcht1" in asm) == (prefetch and dtype == "int8")


@needs_avx_vnni
def test_avx_vnni_int8_is_exact(chosen: list[str]) -> None:
    """256-bit VEX vpdpbusd (AVX-VNNI without AVX-512), transposed B, K = 99."""
    _check(gemm(**{**INT8, "M": 100, "N": 72, "K": 99, "trans_B": True}), VNNI_256, chosen, "cpu_dot_product")


@needs_avx512_bf16
@pytest.mark.parametrize(("ta", "tb"), [(True, False), (False, True)])
def test_avx512_bf16_transposed(chosen: list[str], ta: bool, tb: bool) -> None:
    _check(gemm(**{**BF16, "M": 130, "N": 70, "K": 101, "trans_A": ta, "trans_B": tb}), NO_AMX, chosen,
           "cpu_dot_product")


def _sparse_attention_block(H: int, BI: int, D: int, n_kv: int, scale: float) -> Any:
    """One block of the reference's deepseek_v4 sparse attention: KV rows gathered by index into shared memory,
    S = Q K^T, a row max (`reduce_max`) and exp2, P (bf16, shared) @ V accumulated in an fp32 fragment."""

    @T.prim_func
    def block(Q: T.Tensor((H, D), T.bfloat16), KV: T.Tensor((n_kv, D), T.bfloat16),
              Idx: T.Tensor((BI,), T.int32), Out: T.Tensor((H, D), T.float32)):
        with T.Kernel(1, threads=128):
            Q_shared = T.alloc_shared((H, D), T.bfloat16)
            KV_shared = T.alloc_shared((BI, D), T.bfloat16)
            S_shared = T.alloc_shared((H, BI), T.bfloat16)
            acc_s = T.alloc_fragment((H, BI), T.float32)
            acc_o = T.alloc_fragment((H, D), T.float32)
            row_max = T.alloc_fragment((H,), T.float32)
            T.copy(Q, Q_shared)
            for i, d in T.Parallel(BI, D):
                KV_shared[i, d] = KV[Idx[i], d]
            T.fill(acc_o, 0)
            T.clear(acc_s)
            T.gemm(Q_shared, KV_shared, acc_s, transpose_B=True)
            T.reduce_max(acc_s, row_max, dim=1)
            for i, j in T.Parallel(H, BI):
                acc_s[i, j] = T.exp2(acc_s[i, j] * scale - row_max[i] * scale)
            T.copy(acc_s, S_shared)
            T.gemm(S_shared, KV_shared, acc_o)
            T.copy(acc_o, Out)

    return block


@needs_avx512_bf16
def test_avx512_bf16_sparse_attention_p_at_v(chosen: list[str]) -> None:
    """The P @ V of the reference's sparse attention examples: a row reduction before the dot-product gemm left a
    freed fp32 buffer that TVM's StorageRewrite handed to the gemm's vector accumulators ("index_lanes ==
    value_dtype.lanes() (1 vs. 16)"); by default (no pass config) both gemms take vdpbf16ps."""
    H, BI, D, n_kv, scale = 64, 64, 128, 256, 0.125
    kernel = tilelang.compile(_sparse_attention_block(H, BI, D, n_kv, scale), target=NO_AMX)
    g = torch.Generator().manual_seed(0)
    q, kv = torch.randn(H, D, generator=g).bfloat16(), torch.randn(n_kv, D, generator=g).bfloat16()
    idx = torch.randperm(n_kv, generator=g)[:BI].int()
    out = torch.empty(H, D)
    kernel(q, kv, idx, out)
    v = kv[idx.long()].double()
    s = q.double() @ v.T
    p = torch.exp2((s - s.amax(1, keepdim=True)) * scale).bfloat16().double()
    torch.testing.assert_close(out.double(), p @ v, atol=2e-2, rtol=1e-2)
    assert chosen == ["cpu_dot_product", "cpu_dot_product"]


@needs_vnni_512
def test_avx512_vnni_after_a_row_reduction(chosen: list[str]) -> None:
    """The int8 path's column sums and accumulators after a row reduction (a freed fp32 buffer to reuse)."""
    M = N = K = 64

    @T.prim_func
    def reduce_then_gemm(X: T.Tensor((M, K), T.float32), A: T.Tensor((M, K), T.int8), B: T.Tensor((K, N), T.int8),
                         C: T.Tensor((M, N), T.int32), R: T.Tensor((M,), T.float32)):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((M, K), T.float32)
            r = T.alloc_fragment((M,), T.float32)
            A_shared = T.alloc_shared((M, K), T.int8)
            B_shared = T.alloc_shared((K, N), T.int8)
            acc = T.alloc_fragment((M, N), T.int32)
            T.copy(X, x)
            T.reduce_sum(x, r, dim=1)
            T.copy(r, R)
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.clear(acc)
            T.gemm(A_shared, B_shared, acc)
            T.copy(acc, C)

    kernel = tilelang.compile(reduce_then_gemm, target=NO_AMX)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(M, K, generator=g)
    a, b = (torch.randint(-128, 128, (64, 64), generator=g, dtype=torch.int8) for _ in range(2))
    c, r = torch.empty(M, N, dtype=torch.int32), torch.empty(M)
    kernel(x, a, b, c, r)
    assert torch.equal(c.long(), a.long() @ b.long())
    torch.testing.assert_close(r, x.sum(1), atol=1e-4, rtol=1e-5)
    assert chosen == ["cpu_dot_product"]


# ------------------------------------------------------------------------------------------------ AMX permission
def test_only_amx_kernels_are_marked() -> None:
    amx = tilelang.lower(gemm(**BF16).func, target={"kind": "llvm", "mcpu": "sapphirerapids"})
    fp32 = tilelang.lower(gemm(**dict(BF16, dtype="float32")).func, target={"kind": "llvm", "mcpu": "haswell"})
    assert amx.metadata.get("cpu_amx") is True
    assert "cpu_amx" not in fp32.metadata


@needs_amx_bf16
def test_a_fresh_process_gets_amx_from_a_cached_kernel(tmp_path: Any) -> None:
    """The permission is requested when a marked kernel loads -- also from the disk cache in a new process,
    where nothing else (torch included) asked Linux for tile state first: without it the first tile instruction
    raises SIGILL."""
    script = textwrap.dedent("""
        import torch, tilelang
        from tilelang.testing.corpus import gemm
        ck = gemm(M=64, N=64, K=64, block_M=32, block_N=32, block_K=32, dtype="bfloat16", out_dtype="float32")
        kernel = tilelang.compile(ck.func, target="llvm")
        a, b = ck.make_inputs()
        c = torch.empty(64, 64)
        kernel(a, b, c)
        torch.testing.assert_close(c.double(), a.double() @ b.double(), atol=1e-4, rtol=1e-4)
        print("ok", kernel.artifact.metadata.get("cpu_amx"))
    """)
    env = {**__import__("os").environ, "TILELANG_CACHE_DIR": str(tmp_path)}
    env.pop("TILELANG_DISABLE_CACHE", None)
    for _ in range(2):  # compile and run, then load from the cache and run
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split() == ["ok", "True"]


def test_refused_permission_names_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes
    import errno

    from tilelang_cpu import amx_permission

    class FakeLibc:
        class syscall:
            restype = None

            def __new__(cls, *args: Any) -> int:
                return -1

    monkeypatch.setattr(amx_permission, "_granted", False)
    monkeypatch.setattr(amx_permission.ctypes, "CDLL", lambda *a, **k: FakeLibc)
    monkeypatch.setattr(amx_permission.ctypes, "get_errno", lambda: errno.EINVAL)
    monkeypatch.setattr(amx_permission.platform, "system", lambda: "Linux")
    monkeypatch.setattr(amx_permission.platform, "machine", lambda: "x86_64")
    with pytest.raises(amx_permission.AmxUnavailable, match=r"does not support AMX.*mattr=\['-amx-tile'\]"):
        amx_permission.request_amx()
    monkeypatch.setattr(amx_permission.platform, "system", lambda: "Darwin")
    with pytest.raises(amx_permission.AmxUnavailable, match="Linux x86-64 only"):
        amx_permission.request_amx()
    assert ctypes.get_errno is not None


# ------------------------------------------------------------------------------------------------ pieces
def test_tile_config_block() -> None:
    """palette 1; C tiles 0-3 (rows x 4-byte columns), A tiles 4-5 (64-byte rows), B tiles 6-7 (16 rows)."""
    from tilelang_cpu.tileops.gemm_amx import tile_config

    block = tile_config([16, 5], [16, 8])
    assert len(block) == 64 and block[0] == 1 and block[1:16] == [0] * 15
    colsb = [block[16 + 2 * t] | block[17 + 2 * t] << 8 for t in range(8)]
    assert colsb == [64, 32, 64, 32, 64, 64, 64, 32]
    assert block[48:56] == [16, 16, 5, 5, 16, 5, 16, 16]
    assert block[32:48] == [0] * 16 and block[56:] == [0] * 8
    single = tile_config([3], [10])
    assert [single[16 + 2 * t] for t in range(8)] == [40, 0, 0, 0, 64, 0, 40, 0]
    assert single[48:56] == [3, 0, 0, 0, 3, 0, 16, 0]


def test_vnni_layout_offsets() -> None:
    from tilelang_cpu.gemm_vnni_pack import VnniLayout

    amx = VnniLayout(16, 2, 32)
    assert amx.k_pad(72) == 96 and amx.panels(40) == 3 and amx.size(72, 40) == 3 * 96 * 16
    int8 = VnniLayout(64, 4, 4)
    assert int8.k_pad(99) == 100 and int8.size(99, 72) == 2 * 100 * 64
