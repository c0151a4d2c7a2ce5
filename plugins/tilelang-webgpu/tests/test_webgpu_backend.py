"""The WebGPU plugin as installed: WGSL through the registry, adapter discovery."""

from __future__ import annotations

from tilelang.backend import determine_target, plugins
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu


def test_entry_point_serves_webgpu():
    assert {ep.kind for ep in plugins.entry_points() if ep.package == "tilelang_webgpu"} == {"webgpu"}
    assert determine_target("webgpu") == {"kind": "webgpu"}


def test_registry_codegen_emits_wgsl():
    _, device_modules = build_through_registry(vector_add_gpu(), "webgpu")
    wgsl = device_modules[0].inspect_source()
    assert "@compute" in wgsl and "fn vector_add_kernel" in wgsl


def test_toolchain_reports_wgpu_and_its_adapter():
    import tilelang.webgpu.backend as backend

    report = {t.name: t for t in backend.BACKEND.toolchain_report()}
    assert "wgpu" in report
    if report["wgpu"].ok:
        assert "adapter" in report
