"""TVM's CUDA runtime compiles at ``target.build.cuda`` time on a GPU machine through the global
``tvm_callback_cuda_compile``; while this plugin builds, that callback is the plugin's own (its helper header,
its compiler, its error messages) and every other caller keeps the callback registered before."""

from __future__ import annotations

import threading

import pytest

from tilelang_cuda import codegen
from tilelang_cuda.compiler import CudaCompileError

NAME = "tvm_callback_cuda_compile"


def _registered():
    import tvm_ffi

    return tvm_ffi.get_global_func(NAME, allow_missing=True)


@pytest.fixture
def tvm_default():
    """TVM's own callback, registered as importing `tvm.support.nvcc` does (restored afterwards)."""
    import tvm_ffi

    before = _registered()
    calls = []

    def default(code, target=None):
        calls.append(str(code))
        return b"tvm-default"

    tvm_ffi.register_global_func(NAME, default, override=True)
    yield calls
    if before is None:
        tvm_ffi.remove_global_func(NAME)
    else:
        tvm_ffi.register_global_func(NAME, before, override=True)


def test_callback_is_ours_inside_the_build_and_restored_after(tvm_default):
    seen_elsewhere = []

    def other_thread():
        seen_elsewhere.append(bytes(_registered()("other", None)))

    with codegen._compile_callback(lambda code, target: b"ours:" + code.encode()):
        assert bytes(_registered()("src", None)) == b"ours:src"
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert seen_elsewhere == [b"tvm-default"]  # another thread's TVM build keeps TVM's callback
    assert bytes(_registered()("after", None)) == b"tvm-default"
    assert tvm_default == ["other", "after"]


def test_callback_removed_again_when_none_was_registered():
    import tvm_ffi

    before = _registered()
    if before is not None:
        tvm_ffi.remove_global_func(NAME)
    try:
        with codegen._compile_callback(lambda code, target: b"x"):
            assert _registered() is not None
        assert _registered() is None
    finally:
        if before is not None:
            tvm_ffi.register_global_func(NAME, before, override=True)


def _fake_tvm_build(monkeypatch):
    """``target.build.cuda`` as TVM's CUDA runtime runs it: the compile callback on the generated source."""
    import tvm_ffi

    real = tvm_ffi.get_global_func

    def build(mod, target):
        return ("module", bytes(real(NAME)("__global__ void k() {}", target)))

    monkeypatch.setattr(tvm_ffi, "get_global_func",
                        lambda name, *a, **k: build if name == "target.build.cuda" else real(name, *a, **k))


def test_build_compiles_the_plugin_source_and_reports_compile_errors(monkeypatch, tvm_default):
    import tilelang_cuda.compiler as compiler

    _fake_tvm_build(monkeypatch)
    target = type("T", (), {"attrs": {"arch": "sm_90a"}})()
    compiled = []

    def fake_compile(source, arch, *a, **k):
        compiled.append((source, arch))
        return compiler.CudaBinary(b"CUBIN", "ptx", "nvcc")

    monkeypatch.setattr(compiler, "compiler_available", lambda: True)
    monkeypatch.setattr(compiler, "compile_source", fake_compile)
    assert codegen._build_cuda(None, target) == ("module", b"CUBIN")
    source, arch = compiled[0]
    assert arch == "sm_90a" and source == codegen.postprocess_cuda("__global__ void k() {}", target)
    assert tvm_default == []  # TVM's NVRTC path never saw the source

    def failing(source, arch, *a, **k):
        raise CudaCompileError("nvcc: error: identifier 'x' is undefined")

    monkeypatch.setattr(compiler, "compile_source", failing)
    with pytest.raises(CudaCompileError, match="identifier 'x' is undefined"):
        codegen._build_cuda(None, target)
    assert codegen._build_cuda_source_only(None, target) == ("module", b"")
