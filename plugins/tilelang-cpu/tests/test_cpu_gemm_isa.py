"""Per-ISA GEMM choices (`tilelang_cpu.isa`, `tilelang_cpu.gemm_plan`): vector facts from CPU features, micro
tiles and K blocks per ISA, the ``tl.cpu.*`` pass configs (checked, and part of the kernel cache key)."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.testing.corpus import gemm
from tilelang_cpu.gemm_plan import (
    CONFIG_KEYS,
    MicroShape,
    gemm_plan,
    k_block,
    micro_shape,
    parse_micro_tile,
)
from tilelang_cpu.isa import SCALAR, VectorISA, isa_from_features, vector_isa

AVX512 = VectorISA("avx512", 512, 32, True)
AVX2 = VectorISA("avx2", 256, 16, True)
NEON = VectorISA("neon", 128, 32, True)


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


@pytest.mark.parametrize(("features", "triple", "expected"), [
    ({"avx512f", "avx2", "avx", "fma"}, "", AVX512),
    ({"avx2", "avx", "fma"}, "x86_64-pc-linux-gnu", AVX2),
    ({"avx", "sse2"}, "", VectorISA("avx", 256, 16, False)),
    ({"sse2", "sse"}, "", VectorISA("sse", 128, 16, False)),
    ({"neon", "sve"}, "aarch64-linux-gnu", NEON),
    (set(), "x86_64", SCALAR),
])
def test_isa_from_features(features: set[str], triple: str, expected: VectorISA) -> None:
    assert isa_from_features(frozenset(features), triple) == expected


@pytest.mark.parametrize(("config", "name"), [
    ({"kind": "llvm", "mcpu": "haswell"}, "avx2"),
    ({"kind": "llvm", "mcpu": "znver3"}, "avx2"),
    ({"kind": "llvm", "mcpu": "znver4"}, "avx512"),
    ({"kind": "llvm", "mcpu": "sapphirerapids"}, "avx512"),
    ({"kind": "llvm", "mcpu": "sapphirerapids", "mattr": ["-avx512f"]}, "avx2"),
    ({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "neoverse-v1"}, "neon"),
    ({"kind": "c"}, "scalar"),
])
def test_vector_isa_follows_the_targets_cpu_not_the_host(config: dict, name: str) -> None:
    """haswell is AVX2 even on an AVX-512 host (LLVM's own vector-width query reports the host's)."""
    assert vector_isa(config).name == name


def test_micro_tiles_fill_each_register_file() -> None:
    assert micro_shape(128, 128, lanes=16, regs=32) == (6, 64)  # AVX-512: 24 accumulators
    assert micro_shape(128, 128, lanes=8, regs=16) == (6, 16)   # AVX2: 12 accumulators of 16 ymm
    assert micro_shape(128, 128, lanes=4, regs=32) == (6, 16)   # NEON: 24 accumulators of 32 q registers
    assert micro_shape(3, 20, lanes=16, regs=32) == (3, 32)     # small tiles: rows capped by M
    assert gemm_plan(AVX2, 128, 128, 256, "float32", "float32", False) == (6, 16, False, True)
    assert gemm_plan(AVX512, 4, 128, 256, "float16", "float16", False) == (4, 64, True, True)
    # a single row strip reads an fp32 B once: no panel copy
    assert not gemm_plan(AVX512, 4, 128, 256, "float32", "float32", False).pack_b


def test_k_block_keeps_a_b_slice_near_64_kib() -> None:
    assert k_block(AVX512) == 256 and k_block(AVX2) == 512 and k_block(NEON) == 512
    assert k_block(AVX512, tiles=True) == 2048  # AMX: C stays in tile registers over the call
    # int8 B (vpdpbusd / vpdpbssd): the same bytes of B, four times the K
    assert k_block(AVX512, b_bytes=1) == 1024 and k_block(AVX2, b_bytes=1) == 2048
    assert k_block(AVX512, tiles=True, b_bytes=1) == 2048


def test_micro_tile_config_is_checked_against_the_isa() -> None:
    assert parse_micro_tile("8x32", AVX512) == MicroShape(8, 32)
    assert parse_micro_tile("14x8", AVX2) == MicroShape(14, 8)
    with pytest.raises(ValueError, match="'MRxNR'"):
        parse_micro_tile("6-16", AVX2)
    with pytest.raises(ValueError, match="1, 2, 4 or 8 vectors of 8"):
        parse_micro_tile("6x24", AVX2)
    with pytest.raises(ValueError, match="needs 21 vector registers; avx2 has 16"):
        parse_micro_tile("4x32", AVX2)


def _compile(configs: dict, target: object = "llvm") -> object:
    ck = gemm(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, dtype="float32")
    return tilelang.compile(ck.func, target=target, pass_configs=configs)


def test_unknown_cpu_config_names_the_closest_key() -> None:
    with pytest.raises(Exception, match="unknown CPU pass config 'tl.cpu.gemm_microtile'; did you mean "
                                        "'tl.cpu.gemm_micro_tile'"):
        _compile({"tl.cpu.gemm_microtile": "6x16"})
    assert set(CONFIG_KEYS) == {"tl.cpu.gemm_micro_tile", "tl.cpu.gemm_pack_b", "tl.cpu.gemm_k_block",
                                "tl.cpu.gemm_prepack_limit", "tl.cpu.gemm_prefetch", "tl.cpu.elide_copies",
                                "tl.cpu.row_streaming", "tl.cpu.fast_exp", "tl.cpu.vector_reduce",
                                "tl.cpu.gemm_avx512_bf16"}


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_switch_is_in_the_cache_key(key: str) -> None:
    """The switches live in the pass configs and the target, which the kernel cache fingerprints."""
    from tilelang.jit.compiler import CompileOptions

    target = {"kind": "llvm", "mcpu": "haswell"}
    plain = CompileOptions(target=target).fingerprint(target)
    switched = CompileOptions(target=target, pass_configs={key: 0}).fingerprint(target)
    assert plain != switched
    other = {"kind": "llvm", "mcpu": "znver4"}
    assert CompileOptions(target=other).fingerprint(other) != plain
