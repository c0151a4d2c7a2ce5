"""UnrollBudget: a ``T.unroll`` loop TVM's UnrollLoop cannot copy out (trip count not a constant) or should not (the
copies would pass UNROLL_BUDGET statements: the reference's persistent CLC GEMM unrolls 1024 tiles of a warp role
and lowering never finished) stays a loop; ``explicit=True`` always copies."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

tvm = pytest.importorskip("tvm")


def _kinds(func):
    from tvm import tirx

    from tilelang.transform.unroll_budget import UnrollBudget

    mod = UnrollBudget()(tvm.IRModule({"main": func}))
    kinds = {}

    def visit(node):
        if isinstance(node, tirx.For):
            kinds[node.loop_var.name] = node.kind

    tirx.stmt_functor.post_order_visit(mod["main"].body, visit)
    return kinds


def test_small_loops_stay_unrolled_big_and_runtime_ones_become_loops():
    from tvm import tirx
    from tvm.script import tirx as S

    @S.prim_func
    def func(A: S.Buffer((4096,), "float32"), n: S.int32):
        for i in S.unroll(8, annotations={"unroll_budget": 1}):
            A[i] = A[i] + S.float32(1)
        for j in S.unroll(4097, annotations={"unroll_budget": 1}):
            A[j % 4096] = A[j % 4096] * S.float32(2)
        for k in S.unroll(n, annotations={"unroll_budget": 1}):
            A[k] = S.float32(0)
        for e in S.unroll(8192, annotations={"pragma_unroll_explicit": True, "unroll_budget": 1}):
            A[e % 4096] = S.float32(3)
        for b in S.unroll(8192):  # a backend's own unrolled loop (no T.unroll): copied out whatever its size
            A[b % 4096] = S.float32(4)

    kinds = _kinds(func)
    assert kinds["i"] == tirx.ForKind.UNROLLED
    assert kinds["j"] == tirx.ForKind.SERIAL  # 4097 copies of one store: past the budget
    assert kinds["k"] == tirx.ForKind.SERIAL
    assert kinds["e"] == tirx.ForKind.UNROLLED  # explicit: the user asked for the copies
    assert kinds["b"] == tirx.ForKind.UNROLLED


def test_nested_unrolled_loops_count_their_copies():
    from tvm import tirx
    from tvm.script import tirx as S

    @S.prim_func
    def func(A: S.Buffer((64, 128), "float32")):
        for i in S.unroll(64, annotations={"unroll_budget": 1}):
            for j in S.unroll(128, annotations={"unroll_budget": 1}):  # 64 * 128 copies
                A[i, j] = S.float32(1)

    kinds = _kinds(func)
    assert kinds["j"] == tirx.ForKind.UNROLLED and kinds["i"] == tirx.ForKind.SERIAL


def _persistent(target: str, tiles: int = 1024, width: int = 8):
    @tilelang.jit(target=target)
    def persistent(stop: T.int32):
        out = T.empty((tiles, width), "int32")
        with T.Kernel(1, threads=1):
            for r in T.serial(tiles):
                for c in T.serial(width):
                    out[r, c] = -1
            for t in T.unroll(tiles):
                if t == stop:
                    break
                for w in T.unroll(width):
                    out[t, w] = t * width + w
        return out

    return persistent


@pytest.mark.backend("llvm")
def test_a_persistent_loop_over_many_tiles_runs_up_to_its_break():
    """1024 iterations of a body of 8 unrolled stores and a data-dependent break: every iteration up to the break
    ran, none after it."""
    got = _persistent("llvm")(700)
    want = torch.full((1024, 8), -1, dtype=torch.int32)
    want[:700] = torch.arange(700 * 8, dtype=torch.int32).reshape(700, 8)
    torch.testing.assert_close(got, want)


@pytest.mark.backend("c")
def test_the_tile_loop_stays_a_loop_and_its_small_body_is_copied_out():
    source = _persistent("c").get_kernel_source(700)
    assert "for (int32_t t = 0; t < 1024; ++t)" in source and source.count("break;") == 1
    assert "out[((t * 8) + 7)] = ((t * 8) + 7);" in source  # the inner T.unroll(8), copied out


@pytest.mark.backend("llvm")
def test_an_explicit_unroll_of_a_runtime_trip_count_names_the_loop():
    @tilelang.jit(target="llvm")
    def runtime(n: T.int32):
        out = T.empty((16,), "float32")
        with T.Kernel(1, threads=1):
            for i in T.unroll(n, explicit=True):
                out[i] = 1.0
        return out

    with pytest.raises(LoweringError, match="explicit=True.*constant trip count"):
        runtime(4)
