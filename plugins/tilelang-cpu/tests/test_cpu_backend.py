"""The CPU plugin as installed: entry points, the tilelang.cpu alias, registries and a kernel that runs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
import torch

from tilelang.backend import determine_target, plugins, resolve_device_codegen, resolve_execution_backend
from tilelang.errors import BackendNotInstalled
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_host


def test_entry_points_serve_cpu_llvm_and_c():
    kinds = {ep.kind for ep in plugins.entry_points() if ep.package == "tilelang_cpu"}
    assert kinds == {"cpu", "llvm", "c"}


def test_import_tilelang_does_not_load_the_plugin():
    code = "import sys, tilelang; print(any(m.startswith('tilelang_cpu') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_tilelang_cpu_modules_resolve_to_the_plugin():
    import tilelang.cpu.backend
    import tilelang_cpu.backend
    from tilelang.cpu.codegen import LLVM_CODEGEN

    assert tilelang.cpu.backend is tilelang_cpu.backend
    assert LLVM_CODEGEN is sys.modules["tilelang_cpu.codegen"].LLVM_CODEGEN


def test_cpu_spelling_normalises_to_llvm_and_auto_finds_the_cpu(monkeypatch):
    monkeypatch.delenv("TILELANG_DEFAULT_TARGET", raising=False)
    assert determine_target("cpu") == {"kind": "llvm"}
    assert determine_target("auto")["kind"] in plugins.installed_kinds()
    assert resolve_device_codegen({"kind": "llvm"}).name == "llvm"
    assert resolve_device_codegen({"kind": "c"}).name == "c"


def test_kernel_built_through_the_registries_runs_and_matches_torch():
    rt_mod, _ = build_through_registry(vector_add_host(4096), "cpu")
    a, b, c = torch.randn(4096), torch.randn(4096), torch.empty(4096)
    rt_mod["vector_add"](a, b, c)
    torch.testing.assert_close(c, a + b)
    assert "fadd" in rt_mod.inspect_source("ll")  # LLVM IR of the kernel


def test_llvm_code_targets_the_host_cpu():
    from tilelang_cpu.codegen import host_cpu

    rt_mod, _ = build_through_registry(vector_add_host(64), "cpu")
    assert f'"target-cpu"="{host_cpu()}"' in rt_mod.inspect_source("ll")


def test_c_target_emits_c_source():
    rt_mod, _ = build_through_registry(vector_add_host(64), "c")
    source = rt_mod.inspect_source()
    assert '// tvm target: {"kind":"c"' in source
    assert "int32_t __tvm_ffi_vector_add(void* self_handle" in source


def test_execution_backend_is_available_here():
    assert resolve_execution_backend({"kind": "llvm"}).is_available()


@pytest.mark.skipif(importlib.util.find_spec("tilelang_cuda") is not None, reason="tilelang-cuda is installed")
def test_target_cuda_names_the_distribution_to_install():
    with pytest.raises(BackendNotInstalled, match=r"pip install tilelang-cuda"):
        determine_target("cuda")
    with pytest.raises(ModuleNotFoundError, match=r"pip install tilelang-cuda"):
        import tilelang.cuda  # noqa: F401


def test_toolchain_reports_llvm_and_cores():
    from tilelang.cpu.backend import BACKEND

    names = {t.name: t for t in BACKEND.toolchain_report()}
    assert names["llvm (in TVM)"].ok and "mcpu=" in names["llvm (in TVM)"].detail
    assert names["cores"].detail.isdigit()
