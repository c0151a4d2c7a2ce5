"""Entry-point discovery, lazy loading, failure isolation and the tilelang.<backend> import alias."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import warnings

import pytest

from tilelang.backend import (
    Backend,
    BackendLoadWarning,
    device_codegens_for,
    plugins,
    resolve_device_codegen,
)
from tilelang.backend.target import normalize_target
from tilelang.errors import (
    AmbiguousImplementationError,
    BackendLoadError,
    BackendNotInstalled,
    InvalidManifestError,
)

GOOD = """
from tilelang.backend import Backend, DeviceCodegen, TargetKind, hookimpl
from tilelang.backend import register_device_codegen, register_target_kind

LOADED = []

def register():
    LOADED.append(True)
    register_target_kind(TargetKind("{kind}", normalize=lambda c: {{**c, "arch": c.get("arch", "a1")}}))
    register_device_codegen("{kind}", DeviceCodegen("{name}", build=lambda mod, t: "{name}:" + mod,
                                                    supports_target={predicate}))

@hookimpl
def tilelang_postprocess_kernel_source(source, target):
    return source + " // seen by {name}"

BACKEND = Backend(name="{name}", target_kinds=("{kind}",), register=register)
"""


def good_plugin(name, kind, predicate="None"):
    return GOOD.format(name=name, kind=kind, predicate=predicate)


BROKEN = """
from tilelang.backend import Backend, TargetKind, register_target_kind, DeviceCodegen, register_device_codegen

def register():
    register_target_kind(TargetKind("brk"))
    register_device_codegen("brk", DeviceCodegen("brk", build=lambda m, t: m))
    raise RuntimeError("half-way failure in register")

BACKEND = Backend(name="brk", target_kinds=("brk",), register=register)
"""


def test_import_tilelang_loads_no_plugin_tvm_or_torch():
    import subprocess

    code = ("import sys, tilelang; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('tvm', 'tvm_ffi', 'torch', 'numpy') or m.startswith('tilelang_')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plugin_is_imported_only_when_its_kind_is_used(fake_plugins):
    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    assert "tl_fake_a.backend" not in sys.modules
    assert plugins.installed_kinds().count("fka") == 1  # metadata alone
    assert "tl_fake_a.backend" not in sys.modules
    assert normalize_target("fka") == {"kind": "fka", "arch": "a1"}
    assert sys.modules["tl_fake_a.backend"].LOADED == [True]
    assert resolve_device_codegen({"kind": "fka"}).lower("M", None) == "fakea:M"
    normalize_target("fka")
    assert sys.modules["tl_fake_a.backend"].LOADED == [True]  # registered once


def test_missing_backend_names_the_distribution(fake_plugins):
    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    with pytest.raises(BackendNotInstalled) as info:
        resolve_device_codegen({"kind": "cuda"})
    assert "pip install tilelang-cuda" in str(info.value) and "fka" in str(info.value)
    assert isinstance(info.value, ModuleNotFoundError)


def test_broken_plugin_is_reported_once_rolled_back_and_isolated(fake_plugins):
    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    fake_plugins.add("tl_fake_brk", {"brk": "tl_fake_brk.backend:BACKEND"}, BROKEN, distribution="tilelang-brk")
    with pytest.warns(BackendLoadWarning, match=r"'brk' \(tilelang-brk 1.0.*half-way failure"):
        plugins.load_all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported once: no second warning
        plugins.load_all()
        with pytest.raises(BackendLoadError, match="failed to load: RuntimeError: half-way failure") as info:
            normalize_target("brk")
        assert isinstance(info.value.__cause__, RuntimeError)
        with pytest.raises(BackendLoadError):
            resolve_device_codegen({"kind": "brk"})
        assert device_codegens_for({"kind": "brk"}) == []  # its partial registrations were rolled back
        assert resolve_device_codegen({"kind": "fka"}).name == "fakea"  # the other backend keeps working


def test_import_error_in_plugin_module_is_isolated(fake_plugins):
    fake_plugins.add("tl_fake_imp", {"imp": "tl_fake_imp.backend:BACKEND"}, "import no_such_dependency_xyz\n")
    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    with pytest.warns(BackendLoadWarning, match="no_such_dependency_xyz"):
        with pytest.raises(BackendLoadError, match="ModuleNotFoundError"):
            normalize_target("imp")
    assert normalize_target("fka")["kind"] == "fka"


def test_two_plugins_for_one_kind_separated_by_predicates(fake_plugins):
    fake_plugins.add("tl_fake_v1", {"shared": "tl_fake_v1.backend:BACKEND"},
                     good_plugin("vendor1", "shared", predicate="lambda t: t['arch'] == 'a1'"))
    fake_plugins.add("tl_fake_v2", {"shared": "tl_fake_v2.backend:BACKEND"},
                     GOOD.replace("register_target_kind(TargetKind", "(lambda *a, **k: None)(TargetKind").format(
                         name="vendor2", kind="shared", predicate="lambda t: t['arch'] == 'a2'"))
    assert resolve_device_codegen({"kind": "shared", "arch": "a1"}).name == "vendor1"
    assert resolve_device_codegen({"kind": "shared", "arch": "a2"}).name == "vendor2"


def test_two_plugins_claiming_one_kind_without_predicates_are_refused(fake_plugins):
    fake_plugins.add("tl_fake_v1", {"shared": "tl_fake_v1.backend:BACKEND"}, good_plugin("vendor1", "shared"))
    fake_plugins.add("tl_fake_v2", {"shared": "tl_fake_v2.backend:BACKEND"},
                     GOOD.replace("register_target_kind(TargetKind", "(lambda *a, **k: None)(TargetKind").format(
                         name="vendor2", kind="shared", predicate="None"))
    expected = r"2 candidates for device codegen .*'vendor1' \(backend 'vendor1'\), 'vendor2'"
    with pytest.raises(AmbiguousImplementationError, match=expected):
        resolve_device_codegen({"kind": "shared"})


def test_second_target_kind_registration_refuses_the_second_plugin(fake_plugins):
    fake_plugins.add("tl_fake_v1", {"dup": "tl_fake_v1.backend:BACKEND"}, good_plugin("vendor1", "dup"))
    other = good_plugin("vendor2", "dup").replace('c.get("arch", "a1")', 'c.get("arch", "zz")')
    fake_plugins.add("tl_fake_v2", {"dup": "tl_fake_v2.backend:BACKEND"}, other)
    with pytest.warns(BackendLoadWarning, match="target kind 'dup' is already registered.*by backend 'vendor1'"):
        assert normalize_target("dup")["arch"] == "a1"


def test_same_backend_name_in_two_distributions_is_refused(fake_plugins):
    fake_plugins.add("tl_fake_v1", {"k1": "tl_fake_v1.backend:BACKEND"}, good_plugin("same", "k1"))
    fake_plugins.add("tl_fake_v2", {"k2": "tl_fake_v2.backend:BACKEND"}, good_plugin("same", "k2"))
    with pytest.warns(BackendLoadWarning, match="backend name 'same' is already taken"):
        plugins.load_all()


def test_entry_point_name_must_be_one_of_the_manifest_kinds(fake_plugins):
    fake_plugins.add("tl_fake_a", {"wrong": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    with pytest.warns(BackendLoadWarning, match="do not include 'wrong'"):
        plugins.load_kind("wrong")


def test_entry_point_must_name_a_manifest(fake_plugins):
    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:register"}, good_plugin("fakea", "fka"))
    with pytest.warns(BackendLoadWarning, match="must name a tilelang.backend.Backend instance, got function"):
        plugins.load_kind("fka")


@pytest.mark.parametrize("change, message", [
    ({"name": "Bad Name"}, "lowercase identifier"),
    ({"target_kinds": ()}, "non-empty tuple"),
    ({"target_kinds": ["x"]}, "non-empty tuple"),
    ({"target_kinds": ("x", "x")}, "lists a kind twice"),
    ({"register": 3}, "register must be callable"),
    ({"hook_modules": ("ok", 3)}, "hook_modules"),
    ({"toolchain": "nope"}, "toolchain must be callable"),
])
def test_manifest_validates_itself(change, message):
    valid = Backend(name="ok", target_kinds=("ok",), register=lambda: None)
    with pytest.raises(InvalidManifestError, match=message):
        dataclasses.replace(valid, **change)


def test_toolchain_report_never_raises():
    def broken():
        raise OSError("no tools")

    report = Backend(name="ok", target_kinds=("ok",), register=lambda: None, toolchain=broken).toolchain_report()
    assert len(report) == 1 and not report[0].ok and "no tools" in report[0].detail


def test_escape_hatches(fake_plugins, monkeypatch):
    fake_plugins.add("tilelang_fakea", {"fka": "tilelang_fakea.backend:BACKEND"}, good_plugin("fakea", "fka"))
    monkeypatch.setenv("TILELANG_BLOCK_PLUGINS", "fakea")
    plugins.reset()
    assert "fka" not in plugins.installed_kinds()
    monkeypatch.setenv("TILELANG_BLOCK_PLUGINS", "fka")
    plugins.reset()
    assert "fka" not in plugins.installed_kinds()
    monkeypatch.delenv("TILELANG_BLOCK_PLUGINS")
    monkeypatch.setenv("TILELANG_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.reset()
    assert plugins.entry_points() == []
    monkeypatch.delenv("TILELANG_DISABLE_PLUGIN_AUTOLOAD")
    plugins.reset()
    assert "fka" in plugins.installed_kinds()


def test_plugin_hooks_are_registered_when_it_loads(fake_plugins):
    from tilelang.backend import hooks

    fake_plugins.add("tl_fake_a", {"fka": "tl_fake_a.backend:BACKEND"}, good_plugin("fakea", "fka"))
    pm = hooks.plugin_manager()
    assert pm.get_plugin("fakea") is None
    normalize_target("fka")
    assert pm.get_plugin("fakea") is sys.modules["tl_fake_a.backend"]
    assert hooks.chain("tilelang_postprocess_kernel_source", "src", target={"kind": "fka"}) == "src // seen by fakea"
    pm.unregister(name="fakea")


def test_alias_resolves_backend_modules_to_the_plugin_package(fake_plugins):
    fake_plugins.add("tilelang_fakeb", {"fkb": "tilelang_fakeb.backend:BACKEND"}, good_plugin("fakeb", "fkb"),
                     files={"codegen.py": "VALUE = 42\n"})
    alias = importlib.import_module("tilelang.fakeb.codegen")
    real = importlib.import_module("tilelang_fakeb.codegen")
    assert alias is real and alias.VALUE == 42
    import tilelang.fakeb.backend as backend_module  # noqa: F401  (statement form)
    from tilelang.fakeb.backend import BACKEND

    assert BACKEND is sys.modules["tilelang_fakeb.backend"].BACKEND
    assert importlib.import_module("tilelang.fakeb") is sys.modules["tilelang_fakeb"]
    import tilelang

    assert tilelang.fakeb is sys.modules["tilelang_fakeb"]  # attribute access resolves the alias too
    with pytest.raises(AttributeError, match="has no attribute 'zork'"):
        _ = tilelang.zork


def test_alias_of_a_missing_backend_names_its_distribution(fake_plugins):
    # a first-party backend that is not installed: the error says what to install
    with pytest.raises(BackendNotInstalled, match=r"No module named 'tilelang.metal'.*pip install tilelang-metal"):
        importlib.import_module("tilelang.metal.codegen")
    # any other name is a plain missing module: no made-up distribution to install
    with pytest.raises(ModuleNotFoundError) as info:
        import tilelang.zork  # noqa: F401
    assert not isinstance(info.value, BackendNotInstalled) and "pip install" not in str(info.value)


SLOW = """
import time
from tilelang.backend import Backend, DeviceCodegen, TargetKind, register_device_codegen, register_target_kind

def register():
    register_target_kind(TargetKind("slow"))
    time.sleep(0.3)  # a plugin that takes its time: another thread asks for the kind meanwhile
    register_device_codegen("slow", DeviceCodegen("slow", build=lambda m, t: m))

BACKEND = Backend(name="slow", target_kinds=("slow",), register=register)
"""


def test_concurrent_first_use_waits_for_the_plugin_to_load(fake_plugins):
    import threading

    fake_plugins.add("tl_fake_slow", {"slow": "tl_fake_slow.backend:BACKEND"}, SLOW)
    start = threading.Barrier(4)
    seen, errors = [], []

    def use():
        start.wait()
        try:
            seen.append(resolve_device_codegen({"kind": "slow"}).name)
        except Exception as exc:  # a thread that saw the kind as loaded before its codegen was registered
            errors.append(exc)

    threads = [threading.Thread(target=use) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and seen == ["slow"] * 4


@pytest.mark.parametrize("impl, message", [
    ("def tilelang_postprocess_kernel_sourc(source, target):\n    return source\n",
     "tilelang_postprocess_kernel_sourc"),
    ("def tilelang_postprocess_kernel_source(src, target):\n    return src\n", "src"),
])
def test_invalid_hook_implementation_is_an_error_naming_the_plugin(fake_plugins, impl, message):
    from tilelang.backend import hooks

    source = GOOD.format(name="typo", kind="tko", predicate="None").split("@hookimpl")[0]
    source += "@hookimpl\n" + impl + '\nBACKEND = Backend(name="typo", target_kinds=("tko",), register=register)\n'
    fake_plugins.add("tl_fake_typo", {"tko": "tl_fake_typo.backend:BACKEND"}, source, distribution="tilelang-typo")
    with pytest.warns(BackendLoadWarning, match=f"(?s)'typo' \\(tilelang-typo\\).*{message}"):
        with pytest.raises(BackendLoadError, match="invalid hook implementation"):
            normalize_target("tko")
    assert hooks.plugin_manager().get_plugin("typo") is None  # rolled back: nothing of it stays registered
    assert device_codegens_for({"kind": "tko"}) == []
