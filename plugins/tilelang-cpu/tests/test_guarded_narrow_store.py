"""Issue 21: a guarded narrowing store in a T.Parallel wrote one element past the output (LLVM, AVX-512).

``if by * 32 + i < M and bx * 32 + j < N: C[...] = T.cast(A[...], "bfloat16")`` with N = 17 left LLVM's vectoriser a
one-lane masked store of a ``trunc``; LLVM 22's x86 backend stored the un-truncated 32-bit element there
(llvm/llvm-project#179489), corrupting the heap. `tilelang_cpu.passes.tighten_guarded_loops.TightenGuardedLoops`
clips such loops to their guard's range, so no masked store remains. The outputs here are views of the head of a
larger buffer whose tail holds a sentinel: any write past the output changes it, deterministically (no reliance on
malloc noticing)."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T

M = 96
SENTINEL = 7
SLACK = 64


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _guarded_cast(n: int, src: str, dst: str, block: int = 32):
    @T.prim_func
    def guarded_cast(A: T.Tensor((M, n), src), C: T.Tensor((M, n), dst)):
        with T.Kernel(T.ceildiv(n, block), T.ceildiv(M, block)) as (bx, by):
            for i, j in T.Parallel(block, block):
                if by * block + i < M and bx * block + j < n:
                    C[by * block + i, bx * block + j] = T.cast(A[by * block + i, bx * block + j], dst)

    return guarded_cast


def _inputs(n: int, src: str, dst: str) -> torch.Tensor:
    gen = torch.Generator().manual_seed(n)
    if src.startswith("int"):
        return torch.randint(-100, 100, (M, n), generator=gen, dtype=getattr(torch, src))
    a = torch.randn(M, n, generator=gen) * 50
    if dst.startswith("int"):
        return a.clamp(-120, 120)
    if dst == "bfloat16":  # round-to-nearest-even ties: 1 + 2^-8 (to 1), 1 + 3 * 2^-8 (to 1 + 2^-6), negated too
        ties = torch.tensor([0x3F808000, 0x3F818000, 0xBF808000 - (1 << 32), 0xBF818000 - (1 << 32)],
                            dtype=torch.int32).view(torch.float32)
        a.view(-1)[: ties.numel()] = ties
    return a


def _run_in_guarded_region(kernel, a: torch.Tensor, n: int, dst: str) -> tuple[torch.Tensor, torch.Tensor]:
    big = torch.full((M * n + SLACK,), SENTINEL, dtype=getattr(torch, dst))
    out = big.narrow(0, 0, M * n).view(M, n)
    kernel(a, out)
    return out, big[M * n:]


CASES = [(src, dst, n) for src, dst in (("float32", "bfloat16"), ("float32", "float16"), ("float32", "int8"),
                                         ("float32", "int16"), ("int32", "int8"), ("int32", "int16"))
         for n in (17, 33, 5, 1)] + [("float32", "bfloat16", n) for n in (9, 25)]


@pytest.mark.parametrize("src,dst,n", CASES)
def test_guarded_narrowing_store_stays_inside_the_output(src: str, dst: str, n: int) -> None:
    kernel = tilelang.compile(_guarded_cast(n, src, dst), target="cpu")
    a = _inputs(n, src, dst)
    out, tail = _run_in_guarded_region(kernel, a, n, dst)
    assert bool((tail == SENTINEL).all()), f"{src} -> {dst}, width {n}: wrote past the end of the output"
    assert torch.equal(out, a.to(getattr(torch, dst)))  # bf16: round to nearest even, as torch


@pytest.mark.parametrize("dst", ["bfloat16", "int8"])
def test_constant_guard_leaves_no_masked_store(dst: str) -> None:
    """The clipped loop needs no masks: no ``llvm.masked.store`` whatever the host's vector ISA (the overflow
    itself only shows on AVX-512)."""
    kernel = tilelang.compile(_guarded_cast(17, "float32", dst), target="cpu")
    assert "llvm.masked.store" not in kernel.get_kernel_source()


def test_guard_bounds_become_the_loop_range() -> None:
    from tvm import tirx

    from tilelang.transform import utils as C

    kernel = tilelang.compile(_guarded_cast(17, "float32", "bfloat16"), target="cpu")
    loops = [lp for f in kernel.artifact.host_mod.functions.values() if isinstance(f, tirx.PrimFunc)
             for lp in C.collect(f.body, tirx.For)]
    assert any(C.as_int(lp.extent) == 17 for lp in loops)
    assert not any(isinstance(lp.body, tirx.IfThenElse) for lp in loops if C.as_int(lp.extent) == 17)


def test_mixed_guards_keep_their_meaning() -> None:
    """Lower and upper bounds, a strided bound, a remainder kept as the guard, and a nested guard that reads
    memory: the kernel still writes exactly the guarded elements (and nothing past the output)."""
    n = 45

    @T.prim_func
    def mixed(A: T.Tensor((M, n), "float32"), F: T.Tensor((n,), "int32"), C: T.Tensor((M, n), "bfloat16")):
        with T.Kernel(T.ceildiv(n, 16), T.ceildiv(M, 32)) as (bx, by):
            for i, j in T.Parallel(32, 16):
                if by * 32 + i >= 3 and by * 32 + i < M - 1 and 2 * (bx * 16 + j) < n + 3 \
                        and bx * 16 + j > 4 and (i + j) % 3 != 0:
                    if F[bx * 16 + j] > 0:
                        C[by * 32 + i, bx * 16 + j] = T.cast(A[by * 32 + i, bx * 16 + j], "bfloat16")

    kernel = tilelang.compile(mixed, target="cpu")
    a = torch.randn(M, n) * 10
    flag = (torch.arange(n) % 4 != 1).to(torch.int32)
    big = torch.full((M * n + SLACK,), SENTINEL, dtype=torch.bfloat16)
    out = big.narrow(0, 0, M * n).view(M, n)
    kernel(a, flag, out)
    i = torch.arange(M).view(-1, 1)
    j = torch.arange(n).view(1, -1)
    keep = (i >= 3) & (i < M - 1) & (2 * j < n + 3) & (j > 4) & (((i % 32) + (j % 16)) % 3 != 0)
    keep &= flag.view(1, -1) > 0
    expect = torch.where(keep, a.to(torch.bfloat16), torch.full_like(out, SENTINEL))
    assert torch.equal(out, expect)
    assert bool((big[M * n:] == SENTINEL).all())


def test_only_pure_conjuncts_leave_the_loop() -> None:
    """``j < 17`` and ``3 * j >= x`` become the range, ``x < 5`` guards the loop, ``F[x] > 0`` (a load of a buffer
    the loop writes) stays inside; a guard with an else branch is left alone."""
    from tvm import tirx

    from tilelang_cpu.passes.tighten_guarded_loops import tighten_loop

    j, x = tirx.Var("j", "int32"), tirx.Var("x", "int32")
    F = tirx.decl_buffer((64,), "int32", name="F")
    store = tirx.BufferStore(F, tirx.const(1, "int32"), [j])
    cond = tirx.And(tirx.And(j < 17, tirx.BufferLoad(F, [x]) > 0), tirx.And(x < 5, j * 3 >= x))
    zero, full = tirx.const(0, "int32"), tirx.const(32, "int32")
    out = tighten_loop(tirx.For(j, zero, full, tirx.ForKind.SERIAL, tirx.IfThenElse(cond, store, None)))
    assert isinstance(out, tirx.IfThenElse) and isinstance(out.then_case, tirx.For)
    assert "x < 5" in str(out.condition)
    assert isinstance(out.then_case.body, tirx.IfThenElse) and "F[x]" in str(out.then_case.body.condition)
    assert "17" in str(out.then_case.extent) and "// 3" in str(out.then_case.min)
    with_else = tirx.For(j, zero, full, tirx.ForKind.SERIAL, tirx.IfThenElse(j < 17, store, tirx.Evaluate(0)))
    assert tighten_loop(with_else).same_as(with_else)
