"""The CPU micro-kernel ``tl.gemm`` (`tilelang_cpu.tileops.gemm`): selection, and results against torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tilelang
from tilelang.testing.corpus import gemm
from tilelang_cpu.tileops.gemm import micro_shape


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


@pytest.fixture
def chosen(tile_op_choices) -> list[str]:
    """Names of the tile-op implementations LowerTileOps picks for ``tl.gemm`` while the test runs."""
    return tile_op_choices("tl.gemm")


# the host without its bf16 dot-product units (AMX, AVX512-BF16: `test_cpu_gemm_lowp`), so that bf16 takes the
# fp32 micro-kernel; the mattr is harmless where the host lacks them
NO_BF16_UNITS = {"kind": "llvm", "mattr": ["-amx-tile", "-avx512bf16"]}


def _run(ck: Any, configs: dict[str, Any] | None = None, target: Any = "llvm") -> None:
    kernel = tilelang.compile(ck.func, target=target, pass_configs=configs)
    inputs = ck.make_inputs()
    outputs = ck.make_outputs()
    kernel(*inputs, *outputs)
    torch.testing.assert_close(outputs[0].float(), ck.ref(*inputs).float(), atol=ck.atol, rtol=ck.rtol)


def test_micro_shape_fills_the_vector_registers() -> None:
    assert micro_shape(128, 128, lanes=16, regs=32) == (6, 64)  # AVX-512: 24 accumulators
    assert micro_shape(128, 128, lanes=8, regs=16) == (6, 16)   # AVX2: 12 accumulators
    assert micro_shape(3, 20, lanes=16, regs=32) == (3, 32)     # small tiles: rows capped by M


def test_quickstart_gemm_selects_the_micro_kernel(chosen: list[str]) -> None:
    _run(gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float32", relu=True))
    assert chosen == ["cpu_micro_kernel"]


@pytest.mark.parametrize(("m", "n", "k", "bm", "bn", "bk"), [
    (256, 256, 256, 64, 64, 32),
    (200, 136, 72, 64, 64, 32),    # grid tails: tiles overhang the tensors
    (150, 120, 96, 50, 40, 24),    # micro-kernel tails: 50 rows = 8 x 6 + 2, 40 columns < one 64-wide panel
    (96, 200, 64, 96, 200, 64),    # one block; 200 = 3 x 64 + an 8-wide panel
])
def test_fp32_shapes_match_torch(chosen: list[str], m: int, n: int, k: int, bm: int, bn: int, bk: int) -> None:
    _run(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="float32"))
    assert set(chosen) == {"cpu_micro_kernel"}


@pytest.mark.parametrize(("ta", "tb"), [(False, True), (True, False), (True, True)])
def test_transposes_match_torch(chosen: list[str], ta: bool, tb: bool) -> None:
    _run(gemm(M=160, N=96, K=80, block_M=64, block_N=64, block_K=32, trans_A=ta, trans_B=tb, dtype="float32"))
    assert set(chosen) == {"cpu_micro_kernel"}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_inputs_accumulate_in_fp32(chosen: list[str], dtype: str) -> None:
    ck = gemm(M=128, N=128, K=256, block_M=64, block_N=64, block_K=32, dtype=dtype, accum_dtype="float32")
    if dtype == "bfloat16":
        ck.atol = ck.rtol = 3e-2
    _run(ck, target=NO_BF16_UNITS)
    assert set(chosen) == {"cpu_micro_kernel"}


def test_fused_relu_epilogue(chosen: list[str]) -> None:
    _run(gemm(M=192, N=192, K=128, block_M=64, block_N=128, block_K=64, dtype="float32", relu=True))
    assert set(chosen) == {"cpu_micro_kernel"}


def test_fp16_accumulator_falls_back(chosen: list[str]) -> None:
    ck = gemm(M=64, N=64, K=64, block_M=32, block_N=32, block_K=32, dtype="float16", accum_dtype="float16")
    ck.atol, ck.rtol = 0.1, 0.05  # fp16 accumulation
    _run(ck)
    assert chosen and "cpu_micro_kernel" not in chosen


@pytest.mark.parametrize(("m", "n", "k", "bm", "bn", "bk"), [
    (256, 256, 256, 128, 128, 32),
    (150, 200, 96, 50, 200, 24),   # row tail 50 = 8 x 6 + 2; column tail 200 = 3 x 64 + 8
])
def test_packed_b_panels_match_torch(chosen: list[str], m: int, n: int, k: int, bm: int, bn: int, bk: int) -> None:
    """fp32 B read from its tile copy (``tl.cpu.gemm_pack_b=False``) and packed into panels (the default)."""
    for configs in ({"tl.cpu.gemm_pack_b": False}, {}):
        _run(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="float32"), configs)
        _run(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="float32", trans_B=True), configs)
    assert set(chosen) == {"cpu_micro_kernel"}

