"""The ``tilelang`` console script."""

from __future__ import annotations

import json
import subprocess
import sys

from tilelang import __version__
from tilelang.backend import plugins


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tilelang.cli", *args], capture_output=True, text=True, check=True)


def test_version():
    assert run_cli("--version").stdout.splitlines()[0] == f"tilelang-core {__version__}"


def test_backends_json_lists_every_installed_backend_with_its_health():
    report = json.loads(run_cli("backends", "--json").stdout)
    installed = {ep.load().name for ep in plugins.entry_points()}  # a package may ship several manifests
    assert {rec["backend"] for rec in report} == installed
    for rec in report:
        assert rec["status"] == "ok", rec
        assert rec["target_kinds"] and rec["distribution"].startswith("tilelang-")
        for tool in rec["toolchain"]:
            assert set(tool) == {"name", "ok", "detail"}
        for backend in rec["execution_backends"]:
            assert backend["available"] == (backend["detail"] == "ready")


def test_backends_text_report():
    out = run_cli("backends").stdout
    for ep in plugins.entry_points():
        assert ep.kind in out


def test_no_backends_installed_says_how_to_get_one():
    env = {"TILELANG_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "tilelang.cli", "backends"], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert "pip install tilelang-cpu" in out
