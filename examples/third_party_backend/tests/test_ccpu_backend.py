"""The third-party backend, installed from its own distribution, works with an unchanged tilelang-core."""

from __future__ import annotations

import json
import subprocess
import sys

import torch

from tilelang.backend import determine_target, plugins, resolve_device_codegen, resolve_execution_backend
from tilelang.testing.tirx_kernels import build_through_registry, vector_add_host


def test_entry_point_is_discovered_from_metadata():
    eps = [ep for ep in plugins.entry_points() if ep.kind == "ccpu"]
    assert [(ep.distribution, ep.value) for ep in eps] == [("tilelang-ccpu", "tilelang_ccpu.backend:BACKEND")]


def test_new_target_kind_normalises():
    assert determine_target("ccpu") == {"kind": "ccpu", "cflags": "-O3 -march=native"}
    assert determine_target({"kind": "ccpu", "cflags": "-O2"})["cflags"] == "-O2"
    assert determine_target("ccpu", return_object=True).kind.name == "c"


def test_alias_module_and_registries():
    import tilelang.ccpu.codegen
    import tilelang_ccpu.codegen

    assert tilelang.ccpu.codegen is tilelang_ccpu.codegen
    assert resolve_device_codegen({"kind": "ccpu"}).name == "ccpu"
    assert resolve_execution_backend({"kind": "ccpu"}).name == "shared_library"


def test_kernel_compiles_with_the_system_compiler_and_runs():
    rt_mod, _ = build_through_registry(vector_add_host(1000), "ccpu")
    a, b, c = torch.randn(1000), torch.randn(1000), torch.zeros(1000)
    rt_mod["vector_add"](a, b, c)
    torch.testing.assert_close(c, a + b)


def test_cli_lists_the_backend_and_its_toolchain():
    out = subprocess.run([sys.executable, "-m", "tilelang.cli", "backends", "--json"], capture_output=True,
                         text=True, check=True).stdout
    report = {rec["backend"]: rec for rec in json.loads(out)}
    assert report["ccpu"]["status"] == "ok"
    assert report["ccpu"]["target_kinds"] == ["ccpu"]
    assert report["ccpu"]["execution_backends"][0]["name"] == "shared_library"
    assert report["ccpu"]["toolchain"][0]["name"] == "C compiler"
