"""The reference's JIT surface: argument binding, call-form cache, diagnostics, ABI helper, JITKernel parity,
source post-processing callbacks."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def factory(hidden: int, stride: int, flag: bool = False, opts=[1, 2]):  # noqa: B006 (the default is the point)
    @T.prim_func
    def kernel():
        T.evaluate(0)

    return kernel


def test_parse_args_canonicalises_call_forms():
    a, _ = factory.func.parse_args(4, 8)
    b, _ = factory.func.parse_args(stride=8, hidden=4, flag=False, opts=[1, 2])
    assert a == b == ((4, 8, False, (list, (1, 2))), None)
    extra, _ = factory.func.parse_args(4, 8, M=3)
    assert extra[0][-1] == (("M", 3),)
    with pytest.raises(TypeError, match="multiple values"):
        factory.func.parse_args(4, hidden=4, stride=1)
    with pytest.raises(TypeError, match="missing a required argument: 'stride'"):
        factory.func.parse_args(hidden=4)

    @dataclass
    class Unhashable:
        x: int

    with pytest.raises(TypeError, match="Unsupported unhashable JIT compile-time cache key value"):
        factory.func.parse_args(4, 8, opts=Unhashable(1))


def test_call_form_cache_skips_binding(monkeypatch):
    sentinel = object()
    key, _ = factory.func.parse_args(1, 2)
    factory._kernel_cache[key] = sentinel
    factory._call_form_cache.clear()
    assert factory(1, 2) is sentinel

    def boom(*args, **kwargs):
        raise AssertionError("the call-form cache should have answered")

    monkeypatch.setattr(factory.func, "parse_args", boom)
    assert factory(1, 2) is sentinel
    with pytest.raises(TypeError, match="unhashable"):
        factory(1, 2, opts=[3])


def test_jit_phase_logs(caplog):
    from tilelang.jit.diagnostics import jit_phase

    logger = logging.getLogger("tilelang")
    logger.propagate = True
    try:
        caplog.set_level(logging.INFO, logger="tilelang.jit.diagnostics")
        with pytest.raises(RuntimeError), jit_phase("unit", enabled=True, kernel="k"):
            raise RuntimeError("x")
        with jit_phase("quiet", enabled=False):
            pass
    finally:
        logger.propagate = False
    messages = [r.getMessage() for r in caplog.records]
    assert any("phase start: unit" in m and "kernel='k'" in m for m in messages)
    assert any("phase failed: unit" in m for m in messages)
    assert not any("quiet" in m for m in messages)


def test_callee_allocated_outputs_attr():
    from tvm import tirx

    from tilelang.jit.abi import prepare_tvm_ffi_callee_allocated_outputs

    f = tirx.PrimFunc([tirx.Var("a", "handle"), tirx.Var("b", "handle")], tirx.Evaluate(0))
    g, idx = prepare_tvm_ffi_callee_allocated_outputs(f, -1)
    assert idx == [-1] and list(g.attrs["tilelang_out_idx"]) == [-1]
    with pytest.raises(ValueError, match="does not match"):
        prepare_tvm_ffi_callee_allocated_outputs(g, [0])
    with pytest.raises(ValueError, match="out of range"):
        prepare_tvm_ffi_callee_allocated_outputs(f, [5])


def _add_one(n: int = 64):
    @T.prim_func
    def add_one(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=n) as _:
            for i in T.Parallel(n):
                B[i] = A[i] + 1.0

    return add_one


@pytest.mark.backend("c")
def test_jitkernel_parity_and_c_postproc(tmp_path):
    from tilelang.engine.callback import register_c_postproc

    marker = "/* postprocessed by a user callback */"
    register_c_postproc(lambda code, target: marker + "\n" + code)
    try:
        kernel = tilelang.compile(_add_one(32), out_idx=-1, target="c", execution_backend="cython")
    finally:
        import tvm_ffi

        tvm_ffi.register_global_func("tilelang_callback_c_host_postproc", lambda code, target: code, override=True)
    assert marker in kernel.get_kernel_source()
    x = torch.randn(32)
    torch.testing.assert_close(kernel(x), x + 1)  # the post-processed source is what was compiled and runs
    kernel.export_sources(kernel_path=str(tmp_path / "k.c"))
    assert marker in (tmp_path / "k.c").read_text()
    kernel.print_source_code(file=str(tmp_path / "s.c"))
    assert (tmp_path / "s.c").read_text() == kernel.kernel_source
    out = kernel.run_once()
    assert out.shape == (32,)
    with pytest.raises(tilelang.errors.TileLangError, match="no PTX|produces no PTX"):
        kernel.export_ptx(str(tmp_path / "k.ptx"))


@pytest.mark.backend("llvm")
def test_reference_style_jitkernel_constructor():
    from tilelang.jit.kernel import JITKernel

    kernel = JITKernel(_add_one(16), out_idx=-1, target="llvm")
    assert isinstance(kernel, JITKernel)
    x = torch.randn(16)
    torch.testing.assert_close(kernel(x), x + 1)
