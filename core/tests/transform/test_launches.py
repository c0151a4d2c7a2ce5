"""each_launch: the kernel-level passes see a function of several ``T.Kernel`` launches one launch at a time."""

import pytest
import tvm
from transform_helpers import as_module

import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang.transform import utils as C
from tilelang.transform.launches import each_launch, top_level_launches


def split_combine():
    @T.prim_func
    def split_combine(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        scratch = T.alloc_global((64,), "float32")
        with T.Kernel(2, threads=32) as bx:
            for i in T.Parallel(32):
                scratch[bx * 32 + i] = A[bx * 32 + i] * 2
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                B[i] = scratch[i] + 1

    return split_combine


def test_each_run_sees_one_launch_with_its_own_threads_and_the_results_go_back_in_place():
    seen = []

    def run(mod):
        (func,) = mod.functions.values()
        seen.append((len(top_level_launches(func)), C.block_threads(func), C.thread_vars(func)))
        marked = C.with_body(func, func.body).with_attr("tl.shared_bytes", 32 * len(seen))
        return tvm.IRModule({"main": marked})

    func = split_combine()
    out = each_launch(as_module(func), run)["main"]
    assert [(n, threads) for n, threads, _ in seen] == [(1, 32), (1, 64)]
    assert not seen[0][2][0].same_as(seen[1][2][0])
    # the global scratch stays once, before both launches, in the order of the source
    stmts = list(out.body.seq)
    assert isinstance(stmts[0], tvm.tirx.AllocBuffer) and len(stmts) == len(func.body.seq)
    assert [C.block_threads(s) for s in stmts[1:]] == [32, 64]
    assert out.attrs["tl.shared_bytes"] == 64  # the larger block's


def test_a_function_of_one_launch_goes_through_once_unchanged():
    @T.prim_func
    def one(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                A[i] = A[i] + 1

    calls = []
    mod = as_module(one)
    assert each_launch(mod, lambda m: calls.append(m) or m).same_as(mod) and len(calls) == 1


def test_runs_that_disagree_on_an_attribute_are_reported():
    def run(mod):
        (func,) = mod.functions.values()
        return tvm.IRModule({"main": func.with_attr("tl.mode", f"threads{C.block_threads(func)}")})

    with pytest.raises(LoweringError, match="launches disagree on the function attribute tl.mode"):
        each_launch(as_module(split_combine()), run)
