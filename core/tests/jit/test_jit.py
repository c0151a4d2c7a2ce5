"""@tilelang.jit (lazy and eager), compile, par_compile, cached, on real DSL kernels through tilelang.lower."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jit_kernels as kernels
import pytest
import torch

import tilelang
from tilelang.errors import KernelArgumentError, TileLangError

pytestmark = pytest.mark.backend("llvm")
HERE = Path(__file__).parent


def test_tilelang_jit_is_the_decorator_even_after_submodule_import():
    import tilelang.jit as jit_module

    assert callable(tilelang.jit) and callable(jit_module)
    assert jit_module.compile is tilelang.compile


def test_lazy_factory_returns_a_working_kernel():
    kernel = kernels.add(64, 32)
    assert isinstance(kernel, tilelang.JITKernel)
    a, b = torch.randn(64, 32), torch.randn(64, 32)
    torch.testing.assert_close(kernel(a, b), a + b)
    assert kernels.add(64, 32) is kernel  # in-process memo
    assert kernels.add(64, 32, block_M=16) is not kernel
    assert "define" in kernel.get_kernel_source()


def test_lazy_kernel_is_cached_on_disk(cache_dir):
    kernel = kernels.add(32, 16)
    assert not kernel.from_cache
    entries = list((cache_dir / "kernels").glob("*/*/manifest.json"))
    assert len(entries) == 1
    manifest = json.loads(entries[0].read_text())
    assert set(manifest["files"]) == {"artifact.json", "kernel.so"}
    tilelang.cache.manager.kernel_cache.clear(disk=False)
    kernels.add.clear_kernels()
    again = kernels.add(32, 16)
    assert again.from_cache and again.cache_key == kernel.cache_key
    a, b = torch.randn(32, 16), torch.randn(32, 16)
    torch.testing.assert_close(again(a, b), a + b)


def _run(code: str, cache_dir: Path, **extra_env: str) -> subprocess.CompletedProcess:
    """Run `code` as a script file (source keys need the function's source on disk) in a new process."""
    script = cache_dir.parent / "script.py"
    script.write_text(code)
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(HERE), **extra_env}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)


NEW_PROCESS_HIT = """
import sys, json, torch, tilelang

@tilelang.jit(out_idx=[-1], target="cpu")
def add(M, N, block_M=32):
    import jit_kernels as kernels
    return kernels.add_factory(M, N, block_M)

kernel = add(64, 16)
a, b = torch.randn(64, 16), torch.randn(64, 16)
ok = bool(torch.allclose(kernel(a, b), a + b))
print(json.dumps({"from_cache": kernel.from_cache, "tvm": "tvm" in sys.modules, "ok": ok}))
"""


def test_new_process_cache_hit_does_not_import_tvm(cache_dir):
    first = _run(NEW_PROCESS_HIT, cache_dir)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout.splitlines()[-1]) == {"from_cache": False, "tvm": True, "ok": True}
    second = _run(NEW_PROCESS_HIT, cache_dir)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout.splitlines()[-1]) == {"from_cache": True, "tvm": False, "ok": True}


def _scaled_factory(scale):
    @tilelang.jit(out_idx=[-1], target="cpu")
    def scaled(M, N):
        import tilelang.language as T

        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
            with T.Kernel(1, is_cpu=True):
                for i, j in T.Parallel(M, N):
                    C[i, j] = A[i, j] * scale

        return main

    return scaled


def test_source_key_changes_with_closure_values():
    a = torch.ones(4, 4)
    assert [float(_scaled_factory(s)(4, 4)(a)[0, 0]) for s in (1.0, 3.0)] == [1.0, 3.0]
    tilelang.cache.manager.kernel_cache.clear(disk=False)  # again from disk records, keyed by the closure value
    assert [float(_scaled_factory(s)(4, 4)(a)[0, 0]) for s in (3.0, 1.0)] == [3.0, 1.0]


def test_eager_kernel_compiles_per_signature_and_runs():
    a, b = torch.randn(32, 8), torch.randn(32, 8)
    torch.testing.assert_close(kernels.eager_scale_add(a, b), 2.0 * a + b)
    torch.testing.assert_close(kernels.eager_scale_add(a, b, 0.5), 0.5 * a + b)
    a2, b2 = torch.randn(16, 4), torch.randn(16, 4)
    torch.testing.assert_close(kernels.eager_scale_add(a2, b2), 2.0 * a2 + b2)
    k1 = kernels.eager_scale_add.compile(a, b)
    assert k1 is kernels.eager_scale_add.compile(torch.zeros(32, 8), torch.zeros(32, 8))
    assert k1 is not kernels.eager_scale_add.compile(a2, b2)


def test_eager_kernel_new_process_hit(cache_dir):
    code = """
import sys, json, torch
import jit_kernels as kernels
a, b = torch.randn(32, 8), torch.randn(32, 8)
out = kernels.eager_scale_add(a, b)
k = kernels.eager_scale_add.compile(a, b)
print(json.dumps({"from_cache": k.from_cache, "ok": bool(torch.allclose(out, 2 * a + b))}))
"""
    assert json.loads(_run(code, cache_dir).stdout.splitlines()[-1]) == {"from_cache": False, "ok": True}
    assert json.loads(_run(code, cache_dir).stdout.splitlines()[-1]) == {"from_cache": True, "ok": True}


def test_eager_bad_arguments():
    with pytest.raises(Exception, match="shape|dtype"):
        kernels.eager_scale_add(torch.randn(32, 8), torch.randn(32, 8).double())
    k = kernels.eager_scale_add.compile(torch.randn(32, 8), torch.randn(32, 8))
    a, b = torch.randn(32 * 8 + 1)[1:].view(32, 8), torch.randn(32, 8)  # an offset view is no bad argument
    torch.testing.assert_close(k(a, b), 2 * a + b)


def test_compile_and_cached_and_out_idx():
    prim = kernels.add_factory(16, 16)
    kernel = tilelang.compile(prim, out_idx=-1, target="cpu")
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    torch.testing.assert_close(kernel(a, b), a + b)
    assert tilelang.compile(prim, out_idx=-1, target="cpu") is kernel  # memory cache
    no_out = tilelang.cached(prim, None, target="cpu")
    c = torch.empty(16, 16)
    assert no_out(a, b, c) is None
    torch.testing.assert_close(c, a + b)
    assert no_out.cache_key == kernel.cache_key  # one disk entry serves both out_idx


def test_par_compile():
    prims = [kernels.add_factory(16 * i, 8) for i in (1, 2, 3)]
    compiled = tilelang.par_compile(prims, out_idx=[-1], target="cpu", num_workers=2)
    for i, kernel in zip((1, 2, 3), compiled):
        a, b = torch.randn(16 * i, 8), torch.randn(16 * i, 8)
        torch.testing.assert_close(kernel(a, b), a + b)


def test_disable_cache(cache_dir, monkeypatch):
    tilelang.disable_cache()
    try:
        assert not tilelang.is_cache_enabled()
        kernel = tilelang.compile(kernels.add_factory(8, 8), out_idx=-1, target="cpu")
        assert kernel.cache_key is None and not (cache_dir / "kernels").exists()
    finally:
        tilelang.enable_cache()
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    assert not tilelang.is_cache_enabled()


def test_clear_cache(cache_dir):
    kernels.add(8, 8)
    assert any((cache_dir / "kernels").iterdir())
    tilelang.clear_cache()
    assert not (cache_dir / "kernels").exists() or not any((cache_dir / "kernels").iterdir())


def test_kernel_api(tmp_path):
    kernel = kernels.add(16, 8)
    assert kernel.execution_backend == "tvm_ffi"
    assert kernel.params[0].name == "A" and kernel.out_idx == [2]
    assert "add" in repr(kernel)
    with pytest.raises(TileLangError, match="export_ptx.*not available.*'llvm'"):
        kernel.export_ptx()
    with pytest.raises(TileLangError, match="export_sass"):
        kernel.export_sass()
    path = tmp_path / "add.so"
    kernel.export_library(path)
    import tvm_ffi

    func = tvm_ffi.load_module(str(path))[kernel.name]
    a, b, c = torch.randn(16, 8), torch.randn(16, 8), torch.empty(16, 8)
    func(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_unknown_execution_backend():
    from tilelang.errors import ExecutionBackendUnavailable

    with pytest.raises(ExecutionBackendUnavailable, match="Invalid execution backend 'nope'.*Allowed: tvm_ffi"):
        tilelang.compile(kernels.add_factory(8, 8), target="cpu", execution_backend="nope")


def test_kernel_compiled_hook_fires(monkeypatch):
    from tilelang.backend import hookimpl
    from tilelang.backend.hooks import plugin_manager

    seen = []

    class Observer:
        @hookimpl
        def tilelang_kernel_compiled(self, kernel):
            seen.append(kernel.name)

    observer = Observer()
    plugin_manager().register(observer, name="test-observer")
    try:
        tilelang.compile(kernels.add_factory(24, 8), target="cpu")
    finally:
        plugin_manager().unregister(observer)
    assert seen == ["add"]


def _count_specialisations(monkeypatch):
    from tilelang.jit.decorator import JITImpl

    made = []
    original = JITImpl._eager_entry

    def spy(self, args, kwargs):
        made.append(self.fn.__name__)
        return original(self, args, kwargs)

    monkeypatch.setattr(JITImpl, "_eager_entry", spy)
    return made


def test_eager_dynamic_dims_and_runtime_scalars_do_not_respecialise(monkeypatch):
    fn = kernels.eager_dyn_axpy
    fn.clear_kernels()
    made = _count_specialisations(monkeypatch)
    first = None
    for m, alpha in [(4, 1.5), (5, -2.0), (17, 0.25), (4, 3.0), (1000, 1.0)]:
        x, y = torch.randn(m, 8), torch.randn(m, 8)
        torch.testing.assert_close(fn(x, y, alpha), alpha * x + y)
        kernel = fn.compile(x, y, alpha)
        first = first or kernel
        assert kernel is first
    assert made == ["eager_dyn_axpy"]  # one parse and compile for every row count and alpha
    assert [p.shape for p in first.params if p.is_tensor] == [("m", 8)] * 3
    for m in (3, 9, 21):  # by keyword: one more lookup layout, then no parse per size either
        x, y = torch.randn(m, 8), torch.randn(m, 8)
        torch.testing.assert_close(fn(Y=y, X=x, alpha=0.5), 0.5 * x + y)
    assert len(made) == 2
    # a static dim (T.const N) or a Python constant still specialises
    x, y = torch.randn(6, 16), torch.randn(6, 16)
    torch.testing.assert_close(fn(x, y, 2.0), 2.0 * x + y)
    torch.testing.assert_close(fn(x[:, :8].contiguous(), y[:, :8].contiguous(), 2.0, block=8),
                               2.0 * x[:, :8] + y[:, :8])
    assert len(made) == 4


def test_eager_dynamic_fast_path_still_checks(monkeypatch):
    fn = kernels.eager_dyn_axpy
    fn(torch.randn(4, 8), torch.randn(4, 8), 1.0)
    with pytest.raises(KernelArgumentError, match=r"argument 'Y': dim 0 is symbolic 'm' = 5"):
        fn(torch.randn(5, 8), torch.randn(6, 8), 1.0)  # rows disagree: same kernel, rejected by its checks
    with pytest.raises(TileLangError, match="dtype"):
        fn(torch.randn(5, 8).double(), torch.randn(5, 8).double(), 1.0)  # another dtype: never the float32 kernel


def test_eager_exact_signature_memo_is_bounded(monkeypatch):
    from tilelang.jit import decorator

    monkeypatch.setattr(decorator, "_MAX_SIGNATURES", 3)
    fn = kernels.eager_dyn_axpy
    fn.clear_kernels()
    made = _count_specialisations(monkeypatch)
    for m in range(1, 9):
        x, y = torch.randn(m, 8), torch.randn(m, 8)
        torch.testing.assert_close(fn(x, y, 1.0), x + y)
    assert len(fn._kernels) == 3 and made == ["eager_dyn_axpy"]


@tilelang.jit(out_idx=[-1], target="cpu")
def _factory_defined_in_with(M, N, block_M=8):
    import contextlib

    import tilelang.language as T

    with contextlib.nullcontext():

        @T.prim_func
        def add(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]

    return add


@tilelang.jit(out_idx=[-1], target="cpu")
def _factory_built_in_with(M, N, block_M=8):
    import warnings

    with warnings.catch_warnings():
        prim = kernels.add_factory(M, N, block_M)
    return prim


def test_lazy_factory_whose_body_starts_with_a_with_statement():
    for factory in (_factory_defined_in_with, _factory_built_in_with):
        assert factory.mode == "lazy", factory
        kernel = factory(32, 8)
        assert isinstance(kernel, tilelang.JITKernel)
        a, b = torch.randn(32, 8), torch.randn(32, 8)
        torch.testing.assert_close(kernel(a, b), a + b)
    assert kernels.eager_scale_add.mode == "eager"  # the eager form is still told apart
    a, b = torch.randn(16, 8), torch.randn(16, 8)
    torch.testing.assert_close(kernels.eager_scale_add(a, b), 2.0 * a + b)


def test_pass_configs_and_compile_flags_are_checked_at_the_entry_points():
    prim = kernels.add_factory(8, 8)
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a set \{'tl.disable_vectorize'\} "
                                        r"\(did you forget ': True'\?\)"):
        tilelang.compile(prim, target="cpu", pass_configs={"tl.disable_vectorize"})
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a set"):
        tilelang.jit(target="cpu", pass_configs={"tl.disable_vectorize"})(kernels.add_factory)
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a list"):
        tilelang.compile(prim, target="cpu", pass_configs=["tl.disable_vectorize"])
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a str 'tl.disable_vectorize'"):
        tilelang.compile(prim, target="cpu", pass_configs="tl.disable_vectorize")
    with pytest.raises(TypeError, match=r"pass_configs keys must be option names \(str or tilelang.PassConfigKey\), "
                                        r"got the int 1"):
        tilelang.compile(prim, target="cpu", pass_configs={1: True})
    with pytest.raises(TypeError, match=r"compile_flags must be a str or a list/tuple of str, got a dict"):
        tilelang.compile(prim, target="cpu", compile_flags={"-O3": True})
    with pytest.raises(TypeError, match=r"compile_flags\[1\] must be a str, got an int: 3"):
        tilelang.jit(target="cpu", compile_flags=["-O3", 3])(kernels.add_factory)
    with pytest.raises(TypeError, match=r"compile_flags must be .* got an int"):
        tilelang.par_compile([prim], target="cpu", compile_flags=3)
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a set"):
        tilelang.lower(prim, target="cpu", pass_configs={"tl.disable_vectorize"})
    with pytest.raises(TypeError, match=r"pass_configs must be a dict .* got a set"):
        kernels.tuned_add.tuner.set_compile_args(pass_configs={"tl.disable_vectorize"})
    # the valid forms: a dict (str or PassConfigKey keys), None; flags as a str, list or tuple
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    for configs, flags in [({tilelang.PassConfigKey.TL_DISABLE_VECTORIZE: True}, "-O2"),
                           ({"tl.disable_vectorize": True}, ["-O2"]), (None, ("-O2", "-g")), ({}, None)]:
        kernel = tilelang.compile(prim, out_idx=-1, target="cpu", pass_configs=configs, compile_flags=flags)
        torch.testing.assert_close(kernel(a, b), a + b)
