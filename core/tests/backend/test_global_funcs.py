"""TVM global functions declared by plugins (entry-point group ``tilelang.global_funcs``)."""

from __future__ import annotations

import importlib.metadata
import sys
import types

import pytest

from tilelang.backend import plugins

CALLS: list[tuple] = []


def _fake_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)

    def build(*args):
        CALLS.append(args)
        return f"built:{len(args)}"

    module.build = build
    return module


@pytest.fixture
def declared(monkeypatch):
    """Serve two declarations: one from a module not imported yet, one whose plugin is blocked."""
    import tvm_ffi

    names = ["tilelang_test.fake_build", "tilelang_test.blocked_build"]
    eps = [importlib.metadata.EntryPoint(names[0], "tilelang_fakeplugin.codegen:build", plugins.GLOBAL_FUNC_GROUP),
           importlib.metadata.EntryPoint(names[1], "tilelang_blockedplugin.codegen:build",
                                         plugins.GLOBAL_FUNC_GROUP)]
    real = importlib.metadata.entry_points

    def entry_points(**kwargs):
        return eps if kwargs.get("group") == plugins.GLOBAL_FUNC_GROUP else real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(plugins, "_global_funcs_done", False)
    monkeypatch.setenv("TILELANG_BLOCK_PLUGINS", "blockedplugin")
    monkeypatch.delitem(sys.modules, "tilelang_fakeplugin.codegen", raising=False)
    yield names
    for name in names:
        if tvm_ffi.get_global_func(name, allow_missing=True) is not None:
            tvm_ffi.remove_global_func(name)


def test_declared_global_function_imports_its_module_on_first_call(declared, monkeypatch):
    import tvm_ffi

    assert plugins.register_declared_global_funcs() == [declared[0]]
    assert plugins.register_declared_global_funcs() == []  # once per process
    assert tvm_ffi.get_global_func(declared[1], allow_missing=True) is None  # blocked plugin
    monkeypatch.setitem(sys.modules, "tilelang_fakeplugin", types.ModuleType("tilelang_fakeplugin"))
    monkeypatch.setitem(sys.modules, "tilelang_fakeplugin.codegen", _fake_module("tilelang_fakeplugin.codegen"))
    CALLS.clear()
    assert tvm_ffi.get_global_func(declared[0])(1, "x") == "built:2"
    assert CALLS == [(1, "x")]


def test_a_name_tvm_already_has_is_left_alone(declared):
    import tvm_ffi

    tvm_ffi.register_global_func(declared[0], lambda: "mine")
    assert plugins.register_declared_global_funcs() == []
    assert tvm_ffi.get_global_func(declared[0])() == "mine"
