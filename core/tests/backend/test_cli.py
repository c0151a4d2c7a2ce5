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


def _subcommands(parser, prefix=""):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix}{name}", sub
                yield from _subcommands(sub, f"{prefix}{name} ")


def test_every_subcommand_has_a_description_and_examples(monkeypatch, capsys):
    import argparse

    import pytest

    from tilelang import cli

    built = []
    parse_args = argparse.ArgumentParser.parse_args

    def remember(self, *args, **kwargs):
        built.append(self)
        return parse_args(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", remember)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "COMMAND --help" in capsys.readouterr().out
    parsers = dict(_subcommands(built[0]))
    assert set(parsers) == set(cli.COMMANDS)  # no subcommand without its text, no text without its subcommand
    for name in parsers:
        with pytest.raises(SystemExit):
            cli.main([*name.split(), "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        description, examples = cli.COMMANDS[name]
        assert " ".join(description.split()) in help_text, name
        assert "examples:" in help_text and all(" ".join(e.split()) in help_text for e in examples), name
        assert all(e.startswith(("tilelang ", "TILELANG_")) for e in examples), name


def test_env_describes_every_variable():
    from tilelang.env import Environment, EnvVar

    rows = json.loads(run_cli("env", "--json").stdout)
    keys = {a.key for a in vars(Environment).values() if isinstance(a, EnvVar)} | {"CUDA_HOME", "ROCM_HOME"}
    assert {r["name"] for r in rows} == keys
    assert all(r["description"] and "default" in r["description"] for r in rows), [r for r in rows
                                                                                   if not r["description"]]
    text = run_cli("env").stdout
    assert "TILELANG_CACHE_DIR" in text and "root of the on-disk kernel cache" in text


def _clean_env(**extra):
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("TILELANG_LOG_LEVEL", "TILELANG_VERBOSE", "TILELANG_PRINT_ON_COMPILATION")}
    return {**env, **extra}


def _print_on_compilation_row(env):
    rows = json.loads(subprocess.run([sys.executable, "-m", "tilelang.cli", "env", "--json"], capture_output=True,
                                     text=True, check=True, env=env).stdout)
    return next(r for r in rows if r["name"] == "TILELANG_PRINT_ON_COMPILATION")


COMPILE_ONE = """
import tilelang, tilelang.language as T

@T.prim_func
def one(A: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=8) as bx:
        for i in T.Parallel(8):
            A[i] = 1.0

tilelang.compile(one, target="llvm")
"""


def test_env_tells_the_truth_about_the_compilation_line(tmp_path):
    """``TILELANG_PRINT_ON_COMPILATION`` defaults to 1 but its line is logged at INFO: at the default level
    (WARNING) nothing is printed, and ``tilelang env`` says so; at INFO it is printed, and env says that."""
    import pytest

    from tilelang.backend import plugins

    if "llvm" not in plugins.installed_kinds():
        pytest.skip("needs tilelang-cpu to compile")
    script = tmp_path / "compile_one.py"
    script.write_text(COMPILE_ONE)
    for extra, shown in (({}, False), ({"TILELANG_LOG_LEVEL": "INFO"}, True),
                         ({"TILELANG_PRINT_ON_COMPILATION": "1"}, True)):
        env = _clean_env(TILELANG_CACHE_DIR=str(tmp_path / "cache"), TILELANG_DISABLE_CACHE="1", **extra)
        row = _print_on_compilation_row(env)
        assert row["value"] == "1"
        assert ("NOT shown" not in row["note"]) == shown, (extra, row)
        run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
        assert ("TileLang begins to compile kernel `one`" in run.stderr) == shown, (extra, run.stderr)


def test_env_report_holds_what_a_bug_report_needs():
    import platform

    import torch

    out = run_cli("env", "--report").stdout
    for section in ("== versions", "== devices", "== backends and toolchains", "== settings"):
        assert section in out
    assert f"python       {platform.python_version()}" in out
    assert f"torch              {torch.__version__}" in out
    assert "apache-tvm " in out and "platform " in out and "driver " in out
    assert 'target="auto"' in out and "TILELANG_CACHE_DIR" in out
    for ep in plugins.entry_points():
        assert f"{ep.distribution} " in out
    report = json.loads(run_cli("env", "--report", "--json").stdout)
    assert report["packages"]["torch"] == torch.__version__ and report["settings"]


def test_backends_list_each_execution_backend_once():
    report = json.loads(run_cli("backends", "--json").stdout)
    names = [eb["name"] for rec in report for eb in rec["execution_backends"]]
    assert len(names) == len(set(names)), names
    by_name = {rec["backend"]: rec for rec in report}
    if "cutedsl" in by_name:  # shares kind cuda with the cuda backend: listed there, pointed to here
        assert by_name["cutedsl"]["shares_execution_backends_with"] == ["cuda"]
        assert "execution backends: those of cuda (listed above)" in run_cli("backends").stdout
