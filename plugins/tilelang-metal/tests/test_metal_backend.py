"""The Metal plugin as installed: MSL through the registry; running says it needs macOS."""

from __future__ import annotations

import sys

import pytest

from tilelang.backend import determine_target, plugins, resolve_execution_backend
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu


def test_entry_point_serves_metal():
    assert {ep.kind for ep in plugins.entry_points() if ep.package == "tilelang_metal"} == {"metal"}
    assert determine_target("metal") == {"kind": "metal"}


def test_registry_codegen_emits_msl():
    _, device_modules = build_through_registry(vector_add_gpu(), "metal")
    msl = device_modules[0].inspect_source()
    assert "#include <metal_stdlib>" in msl and "kernel void vector_add_kernel" in msl


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS may run Metal")
def test_on_linux_running_says_it_needs_macos():
    with pytest.raises(ExecutionBackendUnavailable, match="needs macOS with MPS"):
        resolve_execution_backend({"kind": "metal"})
