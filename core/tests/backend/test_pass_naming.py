"""One pass naming scheme: every pass a backend registers is called ``<plugin>.<snake_case>`` both in the pipeline
registry and in TVM (what ``PassInstrument``s, ``disabled_pass`` and TVM's errors show), lives in its plugin's
``passes/`` package, and the in-tree backends order their passes by their list alone (no priorities)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tilelang.backend import plugins
from tilelang.backend.passes import _PASSES

NAME = re.compile(r"^[a-z]+\.[a-z0-9_]+$")
# one target kind per in-tree backend that registers passes (the CPU's llvm and c share its list) -> pass prefix
KINDS = {"llvm": "cpu", "cuda": "cuda", "metal": "metal", "webgpu": "webgpu"}


def _registered(kind: str) -> list:
    if kind not in plugins.installed_kinds():
        pytest.skip(f"no backend for target kind {kind!r} is installed")
    plugins.load_kind(kind)
    return _PASSES.get(kind)


def _target(kind: str):
    from tvm.target import Target

    from tilelang.backend.target import determine_target

    config = {"kind": kind, "arch": "sm_90a"} if kind == "cuda" else kind
    return Target({k: v for k, v in determine_target(config).items() if k != "host"})


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_registry_and_tvm_call_each_pass_by_one_name(kind: str) -> None:
    entries = _registered(kind)
    assert entries, f"the {kind} backend registers no pass"
    prefix = KINDS[kind]
    target = _target(kind)
    for entry in entries:
        assert NAME.match(entry.name) and entry.name.split(".")[0] == prefix, entry.name
        assert str(entry.factory(target).info.name) == entry.name


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_pass_lives_in_its_plugins_passes_package(kind: str) -> None:
    entries = _registered(kind)
    # the plugin's package, from the module of its pass factories (core names no plugin)
    plugin = importlib.import_module(entries[0].factory.__module__.split(".")[0])
    package = Path(plugin.__file__).parent / "passes"
    sources = {p.stem: p.read_text() for p in package.glob("*.py")}
    for entry in entries:
        holders = [stem for stem, text in sources.items() if f'"{entry.name}"' in text]
        assert holders, f"no module of {package} defines the TVM pass {entry.name!r}"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_in_tree_passes_run_in_list_order(kind: str) -> None:
    assert all(entry.priority == 0 for entry in _registered(kind))
