"""Every CPU gemm micro-kernel variant, compiled for AVX2 (``mcpu=haswell``) and for the host, run against torch:
micro tiles of each ISA with row / column / K tails, half-precision and transposed operands, B packed once
before the grid (`tilelang_cpu.gemm_prepack`) or per call, with and without software prefetches; and NEON code
generated for aarch64 (compiled, not run)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import torch

import tilelang
from tilelang.testing.corpus import gemm
from tilelang_cpu.isa import vector_isa

HOST = vector_isa({"kind": "llvm"})
AVX2 = {"kind": "llvm", "mcpu": "haswell"}
ISAS = [
    pytest.param(AVX2, ("6x16", "4x16", "8x8", "2x32", "14x8"), id="avx2",
                 marks=pytest.mark.skipif(HOST.name not in ("avx2", "avx512"), reason="host cannot run AVX2")),
    pytest.param({"kind": "llvm"}, ("6x64", "4x64", "8x32", "12x32", "14x32", "6x16", "2x128")
                 if HOST.name == "avx512" else ("6x16", "4x16", "8x8"), id=f"host-{HOST.name}"),
]
# (M, N, K, block_M, block_N, block_K): row tails (100 rows), a panel narrower than NR (96 columns), K merged
# into one step of 160; then whole-tensor panels with two merged K steps of 256
SHAPES = [(200, 192, 160, 100, 96, 32), (256, 256, 512, 128, 128, 32)]


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _check(ck: Any, target: Any, configs: dict[str, Any] | None = None) -> Any:
    kernel = tilelang.compile(ck.func, target=target, pass_configs=configs)
    inputs, outputs = ck.make_inputs(), ck.make_outputs()
    kernel(*inputs, *outputs)
    torch.testing.assert_close(outputs[0].float(), ck.ref(*inputs).float(), atol=ck.atol, rtol=ck.rtol)
    return kernel


@pytest.mark.parametrize("shape", SHAPES, ids=["tails", "panels"])
@pytest.mark.parametrize(("target", "tiles"), ISAS)
def test_every_micro_tile_matches_torch(target: dict, tiles: tuple[str, ...], shape: tuple[int, ...],
                                        tile_op_choices: Any) -> None:
    m, n, k, bm, bn, bk = shape
    chosen = tile_op_choices("tl.gemm")
    for tile in (None, *tiles):
        configs = {"tl.cpu.gemm_micro_tile": tile} if tile else None
        _check(gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, dtype="float32"), target, configs)
    assert set(chosen) == {"cpu_micro_kernel"}


@pytest.mark.parametrize("configs", [{}, {"tl.cpu.gemm_prepack_limit": 0}, {"tl.cpu.gemm_prefetch": False},
                                     {"tl.cpu.gemm_pack_b": False}, {"tl.cpu.gemm_k_block": 1}],
                         ids=["default", "per-call-pack", "no-prefetch", "b-unpacked", "k-steps-kept"])
@pytest.mark.parametrize(("target", "tiles"), ISAS)
def test_operand_forms_match_torch(target: dict, tiles: tuple[str, ...], configs: dict[str, Any]) -> None:
    """Transposed A / B, fp16 / bf16 inputs (fp32 accumulation) and a fused ReLU, under each packing choice."""
    base = dict(M=192, N=256, K=320, block_M=64, block_N=128, block_K=64)
    for kw in (dict(trans_A=True), dict(trans_B=True), dict(trans_A=True, trans_B=True), dict(relu=True)):
        _check(gemm(**base, dtype="float32", **kw), target, configs)
    for dtype in ("float16", "bfloat16"):
        ck = gemm(**base, dtype=dtype, trans_B=dtype == "bfloat16")
        ck.atol = ck.rtol = 3e-2
        _check(ck, target, configs)


@pytest.mark.parametrize(("target", "tiles"), ISAS)
def test_overhanging_grid_and_single_block(target: dict, tiles: tuple[str, ...]) -> None:
    """Tiles past the tensor's edge keep their copies (no whole-tensor packing); one block reads B once."""
    _check(gemm(M=200, N=136, K=72, block_M=64, block_N=64, block_K=32, dtype="float32"), target)
    _check(gemm(M=96, N=200, K=64, block_M=96, block_N=200, block_K=64, dtype="float32"), target)


def _hoisted(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The statements `LowerLaunchToCPU` moves in front of the block loop, per compile."""
    from tilelang_cpu import gemm_prepack

    real = gemm_prepack.hoist_block_invariants
    seen: list[Any] = []

    def spy(body: Any, bound: list[Any]) -> Any:
        body, hoisted = real(body, bound)
        seen.append(hoisted)
        return body, hoisted

    monkeypatch.setattr(gemm_prepack, "hoist_block_invariants", spy)
    return seen


def test_b_is_packed_once_before_the_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    import tvm

    seen = _hoisted(monkeypatch)
    ck = gemm(M=256, N=256, K=512, block_M=64, block_N=128, block_K=32, dtype="float16")
    ck.atol = ck.rtol = 3e-2
    _check(ck, AVX2)
    (hoisted,) = seen
    allocs = [s for s in hoisted if isinstance(s, tvm.tirx.AllocBuffer)]
    packs = [s for s in hoisted if isinstance(s, tvm.tirx.For)]
    assert sorted(str(a.buffer.name) for a in allocs) == ["A_fp32", "B_panels"]
    assert [p.kind for p in packs] == [tvm.tirx.ForKind.PARALLEL] * 2
    seen.clear()
    _check(ck, AVX2, {"tl.cpu.gemm_prepack_limit": 0})
    assert seen == [[]]


def test_b_written_by_the_kernel_is_not_packed_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    import tilelang.language as T

    seen = _hoisted(monkeypatch)

    @T.prim_func
    def gemm_then_write_b(A: T.Tensor((128, 128), "float32"), B: T.Tensor((128, 128), "float32"),
                          C: T.Tensor((128, 128), "float32")):
        with T.Kernel(2, 2, threads=1) as (bx, by):
            A_shared = T.alloc_shared((64, 128), "float32")
            B_shared = T.alloc_shared((128, 64), "float32")
            C_local = T.alloc_fragment((64, 64), "float32")
            T.clear(C_local)
            T.copy(A[by * 64, 0], A_shared)
            T.copy(B[0, bx * 64], B_shared)
            T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * 64, bx * 64])
            B[by, bx] = B[by, bx] * 1.0

    a, b, c = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
    tilelang.compile(gemm_then_write_b, target=AVX2)(a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)
    assert seen == [[]]


def _asm(ck: Any, target: Any, configs: dict[str, Any] | None = None) -> str:
    return str(tilelang.lower(ck.func, target=target, pass_configs=configs).rt_mod.inspect_source("asm"))


def test_prefetches_are_switchable() -> None:
    ck = gemm(M=256, N=256, K=512, block_M=128, block_N=128, block_K=32, dtype="float32")
    assert "prefetcht1" in _asm(ck, AVX2)
    assert "prefetcht1" not in _asm(ck, AVX2, {"tl.cpu.gemm_prefetch": False})


def test_avx2_inner_loop_keeps_its_accumulators_in_ymm_registers() -> None:
    """6x16 on haswell: 12 ymm FMAs per K step, no zmm (the host's AVX-512 must not leak in) and no spills."""
    ck = gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float32")
    asm = _asm(ck, AVX2, {"tl.cpu.gemm_prefetch": False})
    assert "zmm" not in asm
    loops = re.findall(r"\n(\.LBB\S+):\n((?:(?!\n\.LBB).)*?)\n\s*j\w+\s+\1\n", asm, re.S)
    hot = max(loops, key=lambda lp: lp[1].count("vfmadd"))[1]
    assert len(re.findall(r"vfmadd\S+\s+%ymm", hot)) == 12 and "rsp" not in hot


def test_neon_code_for_aarch64() -> None:
    """An aarch64 target gets the NEON micro-kernel (6x16: 24 fmla per K step) and prfm prefetches."""
    ck = gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float32")
    asm = _asm(ck, {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "neoverse-n1"})
    assert "prfm" in asm
    assert len(re.findall(r"\bfmla\s+v\d+\.4s", asm)) >= 24


def test_hoisting_moves_only_block_invariant_packs() -> None:
    """A marked pack that reads a loop variable of the block body stays where it is (its mark dropped)."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_prepack import HOIST, hoist_block_invariants

    def marked(name: str, uses_i: bool, i: Any) -> list[Any]:
        buf = tirx.decl_buffer([8], "float32", name=name, scope="global")
        j = tirx.Var("j", "int32")
        value = tirx.Cast("float32", i + j) if uses_i else tirx.Cast("float32", j)
        pack = tirx.For(j, 0, 8, tirx.ForKind.SERIAL, tirx.BufferStore(buf, value, [j]))
        return [tirx.AllocBuffer(buf, annotations={HOIST: 1}),
                tirx.AttrStmt(buf.data, HOIST, tvm.tirx.const(0, "int32"), pack)]

    i = tirx.Var("i", "int32")
    body = tirx.For(i, 0, 4, tirx.ForKind.SERIAL, C.seq([*marked("moves", False, i), *marked("stays", True, i)]))
    rest, hoisted = hoist_block_invariants(body, [])
    assert [str(s.buffer.name) for s in hoisted if isinstance(s, tirx.AllocBuffer)] == ["moves"]
    assert [s.kind for s in hoisted if isinstance(s, tirx.For)] == [tirx.ForKind.PARALLEL]
    assert [str(a.buffer.name) for a in C.allocations(rest)] == ["stays"]
    assert not C.collect(rest, tirx.AttrStmt, lambda s: str(s.attr_key) == HOIST)
