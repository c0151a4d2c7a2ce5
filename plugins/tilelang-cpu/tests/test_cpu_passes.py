"""The CPU backend's launch emulation and its gemm implementation."""

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.transform import utils as C


def _lower(func):
    return tilelang.lower(func, target="cpu")


def test_block_grid_becomes_one_parallel_loop():
    @T.prim_func
    def add1(A: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, 2, threads=32) as (bx, by):
            for i, j in T.Parallel(32, 16):
                A[by * 32 + i, bx * 16 + j] = A[by * 32 + i, bx * 16 + j] + 1.0

    from tilelang_cpu.passes.lower_launch import LowerLaunchToCPU

    mod = LowerLaunchToCPU(None)(tvm.IRModule({"main": add1}))
    loops = C.collect(mod["main"].body, tvm.tirx.For)
    outer = [lp for lp in loops if lp.kind == tvm.tirx.ForKind.PARALLEL and not C.is_parallel(lp)]
    assert len(outer) == 1 and int(outer[0].extent) == 8
    assert not C.launch_extents(mod["main"])
    a = torch.zeros(64, 64)
    art = _lower(add1)
    art.rt_mod[art.name](a)
    assert torch.equal(a, torch.ones(64, 64))


def test_atomics_make_the_block_loop_serial():
    @T.prim_func
    def count(A: T.Tensor((16,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(16, threads=32) as bx:
            T.atomic_add(Out[0], A[bx])

    from tilelang.transform import LayoutInference, LowerIntrinsics, LowerTileOps, PartitionParallel
    from tilelang_cpu.passes.lower_launch import LowerLaunchToCPU

    target = {"kind": "llvm"}
    mod = tvm.IRModule({"main": count})
    for f in (LayoutInference, LowerTileOps, LowerIntrinsics, PartitionParallel, LowerLaunchToCPU):
        mod = f(target)(mod)
    kinds = {lp.kind for lp in C.collect(mod["main"].body, tvm.tirx.For)}
    assert tvm.tirx.ForKind.PARALLEL not in kinds
    a, out = torch.randn(16), torch.zeros(1)
    art = _lower(count)
    art.rt_mod[art.name](a, out)
    torch.testing.assert_close(out, a.sum().reshape(1))


def test_thread_code_split_at_barriers():
    from tilelang_cpu.passes.lower_launch import emulate_threads

    tx = tvm.tirx.Var("tx", "int32")
    buf = tvm.tirx.decl_buffer((4,), "float32", name="S")
    store = tvm.tirx.BufferStore(buf, tvm.tirx.const(1.0, "float32"), [tx])
    sync = tvm.tirx.Evaluate(tvm.tirx.call_intrin("int32", "tirx.tvm_storage_sync", tvm.ir.StringImm("shared")))
    out = emulate_threads(tvm.tirx.SeqStmt([store, sync, store]), [tx], [4])
    thread_loops = [s for s in out.seq if isinstance(s, tvm.tirx.For) and s.loop_var.same_as(tx)]
    assert len(thread_loops) == 2


@pytest.mark.parametrize("trans_b", [False, True])
def test_cpu_gemm_impl_is_selected_and_correct(trans_b):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[3] / "core" / "tests" / "engine"))
    import engine_kernels as K

    from tilelang.backend import resolve_tile_op_impl

    assert resolve_tile_op_impl("tl.gemm", {"kind": "llvm"}).priority >= 1  # a CPU impl, not core's generic one
    a, b, c = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
    art = _lower(K.gemm(trans_b=trans_b))
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a @ (b.T if trans_b else b), atol=1e-3, rtol=1e-3)
