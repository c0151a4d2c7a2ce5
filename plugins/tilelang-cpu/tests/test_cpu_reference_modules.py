"""The reference's CPU module paths (``tilelang.cpu.<x>``), each exercised through this backend's lowering."""

from __future__ import annotations

import importlib

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.transform import utils as C


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _gemm_kernel(m: int = 32, n: int = 48, k: int = 64):
    @T.prim_func
    def mm(A: T.Tensor((m, k), "float32"), B: T.Tensor((k, n), "float32"), Cout: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=1):
            a_s = T.alloc_shared((m, k), "float32")
            b_s = T.alloc_shared((k, n), "float32")
            acc = T.alloc_fragment((m, n), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.clear(acc)
            T.gemm(a_s, b_s, acc)
            T.copy(acc, Cout)

    return mm


def test_language_is_the_common_surface():
    cpu_language = importlib.import_module("tilelang.cpu.language")
    common = importlib.import_module("tilelang.language.common")
    assert cpu_language.__tilelang_dialect__ == "cpu"
    assert set(cpu_language.__all__) == set(common.__all__)
    assert cpu_language.Kernel is T.Kernel and cpu_language.gemm is T.gemm
    with pytest.raises(AttributeError, match="common language"):
        cpu_language.tma_copy  # noqa: B018 - a CUDA name


def test_pipeline_body_lowers_a_gemm_that_runs():
    from tilelang.cpu.pipeline import CPUPassPipelineBody

    func = _gemm_kernel()
    mod = CPUPassPipelineBody(tvm.IRModule({"main": func}), "llvm")
    assert not C.collect(mod["main"].body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                         and c.op.name == "tl.gemm")  # the tile op is gone
    art = tilelang.lower(func, target="cpu")
    a, b, out = torch.randn(32, 64), torch.randn(64, 48), torch.zeros(32, 48)
    art.rt_mod[art.name](a, b, out)
    torch.testing.assert_close(out, a @ b, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="CPU targets"):
        CPUPassPipelineBody(tvm.IRModule({"main": func}), tvm.target.Target({"kind": "cuda", "arch": "sm_80"}))


def test_gemm_scalar_lowers_and_runs(monkeypatch: pytest.MonkeyPatch):
    import tilelang.transform.lower_tile_ops as lto
    from tilelang.backend import TileOpImpl
    from tilelang.cpu.op.gemm import GEMM_INST_SCALAR, REGISTRATIONS, GemmScalar
    from tilelang.cpu.op.gemm.gemm_scalar import GemmScalar as Direct

    assert GemmScalar is Direct and GEMM_INST_SCALAR == "cpu.scalar"
    assert REGISTRATIONS == (("cpu.scalar", "cpu.scalar", GemmScalar),)
    assert GemmScalar.matches(tvm.target.Target({"kind": "llvm"})) and GemmScalar.matches("c")
    assert not GemmScalar.matches({"kind": "cuda"})
    assert GemmScalar().infer_layout(tvm.target.Target({"kind": "llvm"}), 1) == {}
    used = []
    real = lto.resolve_tile_op_impl

    def scalar_for_gemm(op, target, ctx=None):
        if op != "tl.gemm":
            return real(op, target, ctx)
        used.append(op)
        return TileOpImpl("tl.gemm", "gemm_scalar", GemmScalar(ctx).lower)

    monkeypatch.setattr(lto, "resolve_tile_op_impl", scalar_for_gemm)
    art = tilelang.lower(_gemm_kernel(16, 24, 40), target="llvm")
    assert used
    a, b, out = torch.randn(16, 40), torch.randn(40, 24), torch.zeros(16, 24)
    art.rt_mod[art.name](a, b, out)
    torch.testing.assert_close(out, a @ b, atol=1e-4, rtol=1e-4)


def test_lower_cpu_atomics_makes_read_modify_writes():
    from tilelang.cpu.transform import LowerCPUAtomics
    from tilelang.tileop.atomic import ATOMIC_ATTR

    @T.prim_func
    def count(A: T.Tensor((16,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(16, threads=1) as bx:
            T.atomic_add(Out[0], A[bx])
            T.atomic_max(Out[0], A[bx])

    def elem_ops(func):
        return C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                         and c.op.name.startswith("tl.atomic_") and c.op.name.endswith("_elem_op"))

    mod = tvm.IRModule({"main": count})
    assert len(elem_ops(mod["main"])) == 2
    out = LowerCPUAtomics()(mod)["main"]
    assert not elem_ops(out)
    marks = C.collect(out.body, tvm.tirx.AttrStmt, lambda s: str(s.attr_key) == ATOMIC_ATTR)
    assert sorted(str(m.node.value) for m in marks) == ["add", "max"]
    with pytest.raises(Exception, match="CPU targets"):
        LowerCPUAtomics({"kind": "cuda"})(mod)
