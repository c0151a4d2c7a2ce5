"""`tilelang.cuda.pipeline.CUDAPassPipelineBodyPrologue`: the front half of the CUDA lowering, run alone."""

from __future__ import annotations

import pytest
import tvm

import tilelang.language as T
from tilelang.cuda.pipeline import CUDAPassPipelineBodyPrologue
from tilelang.transform import utils as C


def _gemm():
    @T.prim_func
    def gemm(A: T.Tensor((64, 32), "float16"), B: T.Tensor((32, 64), "float16"), Cout: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            As = T.alloc_shared((64, 32), "float16")
            Bs = T.alloc_shared((32, 64), "float16")
            Cf = T.alloc_fragment((64, 64), "float32")
            T.clear(Cf)
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, Cf)
            for i, j in T.Parallel(64, 64):
                Cout[i, j] = Cf[i, j] * 2

    return gemm


def _calls(func):
    return {str(c.op.name) for c in C.collect(func.body, tvm.ir.Call) if isinstance(c.op, tvm.ir.Op)}


@pytest.mark.parametrize("target", [tvm.target.Target({"kind": "cuda", "arch": "sm_80"}), {"kind": "cuda",
                                                                                            "arch": "sm_80"}])
def test_prologue_lowers_tile_ops_and_stops_before_storage_planning(target):
    out = CUDAPassPipelineBodyPrologue(tvm.IRModule({"main": _gemm()}), target)["main"]
    assert out.attrs["target"].kind.name == "cuda"
    assert not {"tl.copy", "tl.gemm", "tl.fill"} & _calls(out)
    assert not [loop for loop in C.collect(out.body, tvm.tirx.For) if C.is_parallel(loop)]
    assert "tl_mma_f16_f32" in out.script()  # the CUDA plugin's gemm lowering ran
    # still one kernel with its launch, before host/device split and the packed API
    assert "threadIdx.x" in out.script() and "calling_conv" not in out.attrs
    assert "tl.shared_bytes" not in out.attrs  # PlanSharedMemory not yet


def test_prologue_refuses_other_targets():
    with pytest.raises(ValueError, match="needs a cuda target, got kind 'llvm'"):
        CUDAPassPipelineBodyPrologue(tvm.IRModule({"main": _gemm()}), tvm.target.Target({"kind": "llvm"}))


def test_prologue_lowers_each_launch_of_a_function_with_its_own_threads():
    # a split launch and a combine launch (flash_decoding's example_gqa_decode): each launch's code indexes
    # threads by its own thread variable, not by the last launch's
    @T.prim_func
    def two(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32"), Out: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment((64, 64), "float32")
            r = T.alloc_fragment((64,), "float32")
            T.copy(A, f)
            T.reduce_sum(f, r, dim=1)
            T.copy(r, B)
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                Out[i] = B[i] * 2

    out = CUDAPassPipelineBodyPrologue(tvm.IRModule({"main": two}), {"kind": "cuda", "arch": "sm_80"})["main"]
    launches = [s for s in out.body.seq if isinstance(s, tvm.tirx.AttrStmt)]
    assert len(launches) == 2
    for launch in launches:
        own = {v for v, _ in C.launch_extents(launch).values()}
        used = {v for v in C.collect(launch, tvm.ir.Var) if str(v.name) in ("tx", "threadIdx.x")}
        assert used and all(any(v.same_as(o) for o in own) for v in used)
