"""The rules every registry shares: eager, lazy, duplicates, override, rollback (tilelang.backend._registry)."""

from __future__ import annotations

import sys

import pytest

from tilelang.backend import HostCodegen, register_host_codegen, register_lazy_host_codegen
from tilelang.backend._registry import Registry, owned_by, rollback_owner
from tilelang.backend.host_codegen import allowed_host_codegens_for_target, host_codegens_for_target
from tilelang.errors import BackendLoadError, DuplicateRegistrationError

pytestmark = pytest.mark.usefixtures("fresh_registries")


class Item:
    def __init__(self, name, payload=0):
        self.name, self.payload = name, payload


def make_registry():
    return Registry("widget", keyed_by_kind=False)


def test_eager_registration_keeps_order_and_returns_copies():
    reg = make_registry()
    a, b = Item("a"), Item("b")
    reg.register("k", a)
    reg.register("k", b)
    listed = reg.get("k")
    assert listed == [a, b]
    listed.clear()
    assert reg.get("k") == [a, b]


def test_same_entry_twice_is_a_noop():
    reg = make_registry()
    a = Item("a")
    reg.register("k", a)
    reg.register("k", a)
    assert reg.get("k") == [a]


def test_different_entry_under_taken_name_is_refused_then_overridden():
    reg = make_registry()
    first, second = Item("a", 1), Item("a", 2)
    reg.register("k", first)
    with pytest.raises(DuplicateRegistrationError, match="widget 'a' is already registered for 'k'.*override=True"):
        reg.register("k", second)
    reg.register("k", second, override=True)
    assert reg.get("k") == [second]


def test_duplicate_message_names_the_owning_backend():
    reg = make_registry()
    with owned_by("vendor"):
        reg.register("k", Item("a", 1))
    with pytest.raises(DuplicateRegistrationError, match="by backend 'vendor'"):
        reg.register("k", Item("a", 2))


def test_lazy_entry_is_imported_on_first_lookup_only(tmp_path, monkeypatch):
    (tmp_path / "lazy_widgets.py").write_text(
        "from tilelang.backend import HostCodegen\n"
        "CODEGEN = HostCodegen('lazy', build=lambda mod, t: ('built', mod))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    register_lazy_host_codegen("lazyhost", "lazy_widgets:CODEGEN")
    assert "lazy_widgets" not in sys.modules
    assert allowed_host_codegens_for_target({"kind": "lazyhost"}) == ["lazy"]
    assert "lazy_widgets" in sys.modules
    found = host_codegens_for_target({"kind": "lazyhost"})
    assert found[0].lower("M", {"kind": "lazyhost"}) == ("built", "M")
    del sys.modules["lazy_widgets"]


def test_lazy_sequence_registers_every_entry(tmp_path, monkeypatch):
    (tmp_path / "lazy_many.py").write_text(
        "class W:\n    def __init__(s, n): s.name = n\nALL = [W('x'), W('y')]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = make_registry()
    reg.register_lazy("k", "lazy_many:ALL")
    assert [w.name for w in reg.get("k")] == ["x", "y"]
    del sys.modules["lazy_many"]


def test_broken_lazy_path_raises_backend_load_error_each_time():
    reg = make_registry()
    reg.register_lazy("k", "no_such_module_here:THING")
    for _ in range(2):
        with pytest.raises(BackendLoadError, match="widget registered for 'k' at 'no_such_module_here:THING'"):
            reg.get("k")


def test_lazy_path_must_be_a_module_or_module_attribute():
    registry = make_registry()
    registry.register_lazy("k", "just.a.module")  # a module that registers itself when imported
    for bad in ("not a module", "mod:", ":attr", "a..b"):
        with pytest.raises(ValueError, match="package.module:attribute"):
            registry.register_lazy("k", bad)


def test_validation_rejects_wrong_types():
    with pytest.raises(TypeError, match="expected a HostCodegen instance"):
        register_host_codegen("llvm", object())  # type: ignore[arg-type]


def test_rollback_removes_only_that_owners_entries():
    reg = make_registry()
    keep = Item("keep")
    reg.register("k", keep)
    with owned_by("broken"):
        reg.register("k", Item("gone"))
        reg.register("other", Item("gone2"))
    rollback_owner("broken")
    assert reg.get("k") == [keep]
    assert reg.get("other") == []
    assert HostCodegen  # the standard host codegens survive every rollback
