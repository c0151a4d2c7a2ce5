"""The CPU ``pre_layout`` rewrites (`tilelang_cpu.passes.elide_tile_copies`, `tilelang_cpu.passes.merge_gemm_k_steps`)
and small stack buffers in `LowerLaunchToCPU`: what each changes in the IR, what it must leave alone, and results
against torch."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.testing.corpus import elementwise_add, gemm, softmax
from tilelang.transform import utils as C
from tilelang_cpu.passes.elide_tile_copies import elide_tile_copies
from tilelang_cpu.passes.merge_gemm_k_steps import merge_gemm_k_steps


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _tiles(func: Any) -> set[str]:
    return {str(a.buffer.name) for a in C.allocations(func.body)}


def _ops(func: Any, name: str) -> list[Any]:
    return [C.tile_op_of(e)[1] for e in C.collect(func.body, tvm.tirx.Evaluate)
            if C.tile_op_of(e) and C.tile_op_of(e)[0] == name]


def _run(func: Any, inputs: list[Any], outputs: list[Any]) -> None:
    kernel = tilelang.compile(func, target="llvm")
    kernel(*inputs, *outputs)


# ------------------------------------------------------------------------------------------------ copy elision
def test_elementwise_tiles_become_global_reads_and_writes() -> None:
    func = elide_tile_copies(elementwise_add(M=256, N=256, block_M=64, block_N=64).func)
    assert not _tiles(func) and not _ops(func, "tl.copy")
    stores = C.collect(func.body, tvm.tirx.BufferStore)
    assert [str(s.buffer.name) for s in stores] == ["C"]
    assert {str(ld.source.name) for ld in C.collect(func.body, tvm.ir.TensorLoad)} == {"A", "B"}


@pytest.mark.parametrize(("m", "n", "block"), [(256, 256, 64), (100, 72, 32)])
def test_elementwise_results(m: int, n: int, block: int) -> None:
    ck = elementwise_add(M=m, N=n, block_M=block, block_N=block)
    a, b, c = torch.randn(m, n), torch.randn(m, n), torch.empty(m, n)
    _run(ck.func, [a, b], [c])
    torch.testing.assert_close(c, a + b)


def test_overhanging_tiles_keep_their_copies() -> None:
    func = elide_tile_copies(elementwise_add(M=100, N=72, block_M=32, block_N=32).func)
    assert _tiles(func) == {"A_shared", "B_local", "C_local"} and len(_ops(func, "tl.copy")) == 3


def test_gemm_reads_a_in_place_and_keeps_b_and_accumulator() -> None:
    """A is read in place; B too while the micro-kernel packs it (the default), else its tile copy stays."""
    from tilelang.transform.config import tl_configs

    ck = gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=32, dtype="float32")
    func = elide_tile_copies(ck.func)
    assert _tiles(func) == {"C_local"}
    (g,) = _ops(func, "tl.gemm")
    assert str(g.args[0].source.name) == "A" and str(g.args[1].source.name) == "B"
    with tl_configs({"tl.cpu.gemm_pack_b": False}):
        func = elide_tile_copies(ck.func)
    assert _tiles(func) == {"B_shared", "C_local"}
    (g,) = _ops(func, "tl.gemm")
    assert str(g.args[0].source.name) == "A" and str(g.args[1].source.name) == "B_shared"


def test_converting_copy_is_kept() -> None:
    @T.prim_func
    def widen(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((32, 32), "float32")
            C_local = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_shared)
            for i, j in T.Parallel(32, 32):
                C_local[i, j] = A_shared[i, j] * 2.0
            T.copy(C_local, C[by * 32, bx * 32])

    func = elide_tile_copies(widen)
    assert "A_shared" in _tiles(func) and "C_local" not in _tiles(func)
    a, c = torch.randn(64, 64).half(), torch.empty(64, 64)
    _run(widen, [a], [c])
    torch.testing.assert_close(c, a.float() * 2)


def test_transposed_and_strided_reads_are_correct() -> None:
    @T.prim_func
    def shuffle(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((32, 32), "float32")
            C_local = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_shared)
            for i, j in T.Parallel(32, 32):
                C_local[i, j] = A_shared[j, i] + A_shared[(i * 3) % 32, 31 - j]
            T.copy(C_local, C[bx * 32, by * 32])

    func = elide_tile_copies(shuffle)
    assert not _tiles(func)
    a, c = torch.randn(64, 64), torch.empty(64, 64)
    _run(shuffle, [a], [c])
    ref = torch.empty(64, 64)
    for by in range(2):
        for bx in range(2):
            t = a[by * 32:by * 32 + 32, bx * 32:bx * 32 + 32]
            rows = (torch.arange(32) * 3) % 32
            ref[bx * 32:bx * 32 + 32, by * 32:by * 32 + 32] = t.T + t[rows].flip(1)
    torch.testing.assert_close(c, ref)


def test_source_written_in_the_kernel_keeps_the_copy() -> None:
    @T.prim_func
    def snapshot(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((32, 32), "float32")
            T.copy(A[by * 32, bx * 32], A_shared)
            for i, j in T.Parallel(32, 32):
                A[by * 32 + i, bx * 32 + j] = 0.0
            for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A_shared[i, j] + 1.0

    func = elide_tile_copies(snapshot)
    assert "A_shared" in _tiles(func)
    a, c = torch.randn(64, 64), torch.empty(64, 64)
    ref = a + 1
    _run(snapshot, [a], [c])
    torch.testing.assert_close(c, ref)
    assert torch.equal(a, torch.zeros(64, 64))


def test_tile_modified_after_the_copy_keeps_the_copy() -> None:
    ck = softmax(M=64, N=128, block_M=16)
    func = elide_tile_copies(ck.func)
    assert "x" in _tiles(func) and len(_ops(func, "tl.copy")) == 2
    x, y = torch.randn(64, 128), torch.empty(64, 128)
    _run(ck.func, [x], [y])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)


def test_output_read_elsewhere_keeps_the_copy() -> None:
    @T.prim_func
    def twice(A: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            C_local = T.alloc_fragment((32, 32), "float32")
            for i, j in T.Parallel(32, 32):
                C_local[i, j] = A[by * 32 + i, bx * 32 + j] + C[by * 32 + i, bx * 32 + j]
            T.copy(C_local, C[by * 32, bx * 32])

    assert "C_local" in _tiles(elide_tile_copies(twice))
    a, c = torch.randn(64, 64), torch.randn(64, 64)
    ref = a + c
    _run(twice, [a], [c])
    torch.testing.assert_close(c, ref)


def test_tile_read_before_its_copy_keeps_the_copy() -> None:
    @T.prim_func
    def carry(A: T.Tensor((4, 32), "float32"), C: T.Tensor((4, 32), "float32")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((32,), "float32")
            for k in T.serial(4):
                if k > 0:
                    for j in T.Parallel(32):
                        C[k, j] = A_shared[j]
                T.copy(A[k, 0], A_shared)

    assert "A_shared" in _tiles(elide_tile_copies(carry))


# ------------------------------------------------------------------------------------------- accumulator in place
ZEN4 = {"kind": "llvm", "mcpu": "znver4"}  # vpdpbusd, K block 1024 for int8 (256 for fp32)
INT8 = dict(dtype="int8", accum_dtype="int32", out_dtype="int32")


def _int8(m: int, k: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8),
            torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8))


def _rewritten(func: Any, target: Any = ZEN4) -> Any:
    return merge_gemm_k_steps(elide_tile_copies(func, target), target)


def test_int8_gemm_accumulates_into_the_output() -> None:
    """The K loop of the int8 GEMM is one step on vpdpbusd: the clear folds into the gemm, which then writes C
    directly -- no accumulator tile, no fill, no copy, in the tile program and in the compiled kernel -- and the
    result is exact."""
    ck = gemm(M=256, N=256, K=256, block_M=128, block_N=128, block_K=64, **INT8)
    func = _rewritten(ck.func)
    assert not _tiles(func) and not _ops(func, "tl.copy") and not _ops(func, "tl.fill")
    (g,) = _ops(func, "tl.gemm")
    assert [str(g.args[i].source.name) for i in range(3)] == ["A", "B", "C"] and int(g.args[6]) == 1
    lowered = tilelang.lower(ck.func, target=ZEN4)
    llvm_ir = str(lowered.rt_mod.inspect_source("ll"))
    assert "vpdpbusd" in llvm_ir and "C_local" not in llvm_ir
    kept = tilelang.lower(ck.func, target=ZEN4, pass_configs={"tl.cpu.elide_copies": False})
    assert "C_local" in str(kept.rt_mod.inspect_source("ll"))
    # C's vector stores in bounds as a whole (no lane-by-lane guards from the safe-memory pass)
    assert str(lowered.host_mod).count("T.Shuffle") == str(kept.host_mod).count("T.Shuffle")
    a, b = _int8(256, 256, 256)
    c = torch.empty(256, 256, dtype=torch.int32)
    _run(ck.func, [a, b], [c])
    assert torch.equal(c, torch._int_mm(a, b))


@pytest.mark.parametrize(("m", "n", "k", "block_k", "relu"), [
    (256, 256, 256, 32, False),  # one fp32 step of 256: in place
    (256, 192, 256, 32, True),  # the ReLU epilogue runs on C
    (256, 256, 1024, 32, False),  # four steps: the tile stays
])
def test_fp32_gemm_results_with_the_accumulator_in_place(m: int, n: int, k: int, block_k: int,
                                                          relu: bool) -> None:
    ck = gemm(M=m, N=n, K=k, block_M=128, block_N=64, block_K=block_k, dtype="float32", relu=relu)
    func = _rewritten(ck.func)
    assert ("C_local" in _tiles(func)) == (k > 256)
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    _run(ck.func, [a, b], [c])
    ref = a @ b
    torch.testing.assert_close(c, torch.relu(ref) if relu else ref, atol=1e-3, rtol=1e-4)


def test_accumulator_updated_over_several_k_steps_keeps_its_tile() -> None:
    """K of 4096 is four int8 steps of 1024: C would be reloaded from the strided tensor each step (measured
    slower than the tile), so the tile, its clear and its copy stay; results exact."""
    ck = gemm(M=128, N=128, K=4096, block_M=64, block_N=64, block_K=64, **INT8)
    func = _rewritten(ck.func)
    assert _tiles(func) == {"C_local"} and len(_ops(func, "tl.fill")) == 1 and len(_ops(func, "tl.copy")) == 1
    a, b = _int8(128, 4096, 128)
    c = torch.empty(128, 128, dtype=torch.int32)
    _run(ck.func, [a, b], [c])
    assert torch.equal(c, torch._int_mm(a, b))


def _int8_program(case: str) -> Any:
    """A one-step int8 GEMM (K = block_K, so the gemm clears the accumulator) whose accumulator must stay a tile:
    `case` "read" (also copied to D), "cast" (copied to a float32 C), "partial" (half its rows copied out),
    "shared" (every block writes the same part of C)."""
    out = "float32" if case == "cast" else "int32"
    rows = 32 if case == "partial" else 64

    @T.prim_func
    def program(A: T.Tensor((128, 64), "int8"), B: T.Tensor((64, 128), "int8"), C: T.Tensor((128, 128), out),
                D: T.Tensor((128, 128), "int32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((64, 64), "int8")
            B_shared = T.alloc_shared((64, 64), "int8")
            C_local = T.alloc_fragment((64, 64), "int32")
            T.clear(C_local)
            T.copy(A[by * 64, 0], A_shared)
            T.copy(B[0, bx * 64], B_shared)
            T.gemm(A_shared, B_shared, C_local)
            if case == "shared":
                T.copy(C_local, C[0, 0])
            else:
                T.copy(C_local[0:rows, 0:64], C[by * 64, bx * 64])
            if case == "read":
                T.copy(C_local, D[by * 64, bx * 64])

    return program


@pytest.mark.parametrize("case", ["read", "cast", "partial", "shared"])
def test_accumulator_that_must_stay_a_tile(case: str) -> None:
    program = _int8_program(case)
    func = _rewritten(program)
    assert "C_local" in _tiles(func) and not _ops(func, "tl.fill")  # the clear folds into the gemm still
    (g,) = _ops(func, "tl.gemm")
    assert str(g.args[2].source.name) == "C_local" and int(g.args[6]) == 1
    if case == "shared":  # blocks race on C: nothing to compare
        return
    a, b = _int8(128, 64, 128)
    ref = torch._int_mm(a, b)
    c = torch.full((128, 128), 7, dtype=torch.float32 if case == "cast" else torch.int32)
    d = torch.zeros(128, 128, dtype=torch.int32)
    _run(program, [a, b], [c, d])
    if case == "partial":
        for r in (0, 64):
            assert torch.equal(c[r:r + 32], ref[r:r + 32]) and bool((c[r + 32:r + 64] == 7).all())
    else:
        assert torch.equal(c, ref.to(c.dtype))
    if case == "read":
        assert torch.equal(d, ref)


def test_clear_not_next_to_the_gemm_stays() -> None:
    """A tile copy between the clear and the gemm that touches the accumulator keeps the clear a fill."""

    @T.prim_func
    def seeded(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"), S: T.Tensor((64, 64), "float32"),
               C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            C_local = T.alloc_fragment((64, 64), "float32")
            T.clear(C_local)
            T.copy(S[0:32, 0:64], C_local[0:32, 0:64])
            T.gemm(A, B, C_local)
            T.copy(C_local, C[0, 0])

    func = _rewritten(seeded)
    assert len(_ops(func, "tl.fill")) == 1 and "C_local" in _tiles(func)
    a, b, s = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    _run(seeded, [a, b, s], [c])
    ref = a @ b
    ref[:32] += s[:32]
    torch.testing.assert_close(c, ref, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------------------------------------ K-step merge
def test_k_steps_merge_to_a_long_gemm() -> None:
    from tilelang.transform.config import tl_configs

    func = gemm(M=256, N=256, K=1024, block_M=128, block_N=128, block_K=32, dtype="float32").func
    avx512 = {"kind": "llvm", "mcpu": "skylake-avx512"}  # K block 256 (512 on an AVX2 host: not this test's host)
    with tl_configs({"tl.cpu.gemm_pack_b": False}):  # keep the B tile copy, to see it widened
        merged = merge_gemm_k_steps(elide_tile_copies(func, avx512), avx512)
    loops = [lp for lp in C.collect(merged.body, tvm.tirx.For) if _ops(lp, "tl.gemm")]
    assert [int(lp.extent) for lp in loops] == [4]
    (g,) = _ops(merged, "tl.gemm")
    assert int(g.args[0].region[1].extent) == 256 and int(g.args[1].region[0].extent) == 256
    shapes = {str(a.buffer.name): [int(s) for s in a.buffer.ty.shape] for a in C.allocations(merged.body)}
    assert shapes["B_shared"] == [256, 128]


@pytest.mark.parametrize(("mcpu", "steps"), [("sapphirerapids", [2]), ("znver4", [16]), ("haswell", [8])])
def test_k_block_of_a_bf16_gemm_follows_its_lowering(mcpu: str, steps: list[int]) -> None:
    """On AMX tiles the K block is 2048 (C stays in tile registers over the call); the dot-product and fp32
    micro-kernels keep their ISA's K block (256 on AVX-512, 512 on AVX2)."""
    func = gemm(M=256, N=256, K=4096, block_M=128, block_N=128, block_K=32, dtype="bfloat16").func
    merged = merge_gemm_k_steps(elide_tile_copies(func), {"kind": "llvm", "mcpu": mcpu})
    loops = [lp for lp in C.collect(merged.body, tvm.tirx.For) if _ops(lp, "tl.gemm")]
    assert [int(lp.extent) for lp in loops] == steps


@pytest.mark.parametrize(("mcpu", "steps"), [("sapphirerapids", [2]), ("znver4", [4]), ("haswell", [8])])
def test_k_block_of_an_int8_gemm_follows_its_lowering(mcpu: str, steps: list[int]) -> None:
    """int8 on vpdpbusd (znver4): four times the fp32 K block (1024 on AVX-512: the same bytes of B); AMX keeps
    2048; without a dot-product unit (haswell: the int32 loop) the ISA's fp32 K block."""
    func = gemm(M=256, N=256, K=4096, block_M=128, block_N=128, block_K=64, dtype="int8", accum_dtype="int32",
                out_dtype="int32").func
    merged = merge_gemm_k_steps(elide_tile_copies(func), {"kind": "llvm", "mcpu": mcpu})
    loops = [lp for lp in C.collect(merged.body, tvm.tirx.For) if _ops(lp, "tl.gemm")]
    assert [int(lp.extent) for lp in loops] == steps


def test_k_steps_kept_when_the_accumulator_is_cleared_each_step() -> None:
    @T.prim_func
    def last_step(A: T.Tensor((64, 128), "float32"), B: T.Tensor((128, 64), "float32"),
                  C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, 1, threads=128):
            A_shared = T.alloc_shared((64, 32), "float32")
            B_shared = T.alloc_shared((32, 64), "float32")
            C_local = T.alloc_fragment((64, 64), "float32")
            for k in T.serial(4):
                T.copy(A[0, k * 32], A_shared)
                T.copy(B[k * 32, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local, clear_accum=True)
            T.copy(C_local, C[0, 0])

    assert merge_gemm_k_steps(last_step).same_as(last_step)
    a, b, c = torch.randn(64, 128), torch.randn(128, 64), torch.empty(64, 64)
    _run(last_step, [a, b], [c])
    torch.testing.assert_close(c, a[:, 96:] @ b[96:], atol=1e-4, rtol=1e-4)


def test_k_steps_kept_when_the_loop_does_more_than_copy_and_gemm() -> None:
    ck = gemm(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32, dtype="float32")
    from tilelang.testing.corpus import gemm_fragment_a

    frag = gemm_fragment_a(M=128, N=128, K=128, dtype="float32")
    assert merge_gemm_k_steps(frag.func).same_as(frag.func)
    assert not merge_gemm_k_steps(ck.func).same_as(ck.func)


@pytest.mark.parametrize(("m", "n", "k", "bm", "bn", "bk", "ta", "tb", "dtype"), [
    (256, 256, 512, 128, 128, 32, False, False, "float32"),
    (192, 128, 320, 64, 64, 32, True, False, "float32"),
    (128, 192, 256, 64, 64, 32, False, True, "float32"),
    (200, 136, 300, 64, 64, 32, False, False, "float32"),  # overhangs: copies kept, still merged
    (128, 128, 256, 64, 64, 32, False, False, "float16"),
])
def test_gemm_results_with_the_rewrites(m: int, n: int, k: int, bm: int, bn: int, bk: int, ta: bool, tb: bool,
                                        dtype: str) -> None:
    ck = gemm(M=m, N=n, K=k, block_M=bm, block_N=bn, block_K=bk, trans_A=ta, trans_B=tb, dtype=dtype,
              relu=True)
    inputs = ck.make_inputs()
    outputs = ck.make_outputs()
    _run(ck.func, inputs, outputs)
    torch.testing.assert_close(outputs[0].float(), ck.ref(*inputs).float(), atol=ck.atol, rtol=ck.rtol)


def test_merged_gemm_is_bit_identical_to_the_step_by_step_one() -> None:
    ck = gemm(M=128, N=128, K=512, block_M=64, block_N=64, block_K=32, dtype="float32")
    a, b = torch.randn(512, 128).T.contiguous(), torch.randn(512, 128)
    c_merged, c_steps = torch.empty(128, 128), torch.empty(128, 128)
    _run(ck.func, [a, b], [c_merged])
    tilelang.compile(ck.func, target="llvm", pass_configs={"tl.cpu.gemm_k_block": 1})(a, b, c_steps)
    assert torch.equal(c_merged, c_steps)


# ------------------------------------------------------------------------------------------------ stack buffers
def test_small_local_buffers_stay_off_the_heap() -> None:
    from tilelang_cpu.passes.lower_launch import LowerLaunchToCPU

    @T.prim_func
    def scratch(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, threads=1) as bx:
            small = T.alloc_local((16,), "float32")
            big = T.alloc_local((512,), "float32")
            for j in T.serial(16):
                small[j] = A[bx * 16, j]
            for j in T.serial(512):
                big[j] = A[bx * 16 + j // 64, j % 64]
            for j in T.serial(16):
                A[bx * 16 + 8, j] = small[j] + big[j]

    mod = LowerLaunchToCPU(None)(tvm.IRModule({"main": scratch}))
    scopes = {str(a.buffer.name): C.scope_of(a.buffer) for a in C.allocations(mod["main"].body)}
    assert scopes == {"small": "global", "big": "local"}
    a = torch.randn(64, 64)
    ref = a.clone()
    for bx in range(4):
        ref[bx * 16 + 8, :16] = a[bx * 16, :16] + ref[bx * 16, :16]
    _run(scratch, [], [a])
    torch.testing.assert_close(a, ref)
    ck = softmax(M=64, N=64, block_M=4)
    x, y = torch.randn(64, 64), torch.empty(64, 64)
    _run(ck.func, [x], [y])
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)
