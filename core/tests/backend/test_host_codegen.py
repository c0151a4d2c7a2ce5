"""The seed API of tilelang.backend.host_codegen."""

from __future__ import annotations

import sys

import pytest

from tilelang.backend import host_codegen as hc
from tilelang.errors import AmbiguousImplementationError, NoImplementationError

pytestmark = pytest.mark.usefixtures("fresh_registries")


def test_seed_api_names_exist():
    for name in ["HostCodegen", "HostCodegenHook", "global_func_host_codegen", "register_host_codegen",
                 "register_lazy_host_codegen", "register_host_codegen_hook", "register_lazy_host_codegen_hooks",
                 "allowed_host_codegens_for_target", "apply_host_codegen_hooks", "resolve_host_codegen",
                 "HostCodegenFunc", "HostCodegenHookFunc", "TargetPredicate"]:
        assert hasattr(hc, name), name


def test_host_codegen_matches_and_lower():
    cg = hc.HostCodegen("x", build=lambda mod, th: (mod, th["kind"]), supports_target=lambda th: th.get("ok"))
    assert cg.matches({"kind": "llvm", "ok": True})
    assert not cg.matches({"kind": "llvm"})
    assert cg.lower("M", {"kind": "llvm"}) == ("M", "llvm")
    assert hc.HostCodegen("y", build=lambda m, t: m).matches({"kind": "anything"})


def test_hook_matches_and_lower():
    hook = hc.HostCodegenHook("h", apply=lambda mod, th, t: [*mod, t["kind"]],
                              supports_target=lambda t: t.get("arch") == "sm_90a")
    assert hook.matches({"kind": "cuda", "arch": "sm_90a"})
    assert not hook.matches({"kind": "cuda", "arch": "sm_80"})
    assert hook.lower([], {"kind": "llvm"}, {"kind": "cuda"}) == ["cuda"]


def test_standard_host_codegens_are_registered():
    assert hc.allowed_host_codegens_for_target({"kind": "llvm"}) == ["llvm"]
    assert hc.resolve_host_codegen({"kind": "c"}).name == "c"


def test_allowed_filters_by_predicate_and_resolve_refuses_ambiguity():
    only_one, at_least_one = (lambda t: t["v"] == 1), (lambda t: t["v"] >= 1)
    hc.register_host_codegen("myhost", hc.HostCodegen("a", build=lambda m, t: "a", supports_target=only_one))
    hc.register_host_codegen("myhost", hc.HostCodegen("b", build=lambda m, t: "b", supports_target=at_least_one))
    assert hc.allowed_host_codegens_for_target({"kind": "myhost", "v": 2}) == ["b"]
    assert [c.name for c in hc.host_codegens_for_target({"kind": "myhost", "v": 2})] == ["b"]
    assert hc.resolve_host_codegen({"kind": "myhost", "v": 2}).name == "b"
    with pytest.raises(AmbiguousImplementationError, match="a, b"):
        hc.resolve_host_codegen({"kind": "myhost", "v": 1})
    with pytest.raises(NoImplementationError, match="no host codegen serves host target kind 'myhost'"):
        hc.resolve_host_codegen({"kind": "myhost", "v": 0})


def test_hooks_apply_in_registration_order_and_only_when_matching():
    hc.register_host_codegen_hook("dev", hc.HostCodegenHook("first", apply=lambda m, th, t: [*m, "first"]))
    hc.register_host_codegen_hook("dev", hc.HostCodegenHook("never", apply=lambda m, th, t: [*m, "never"],
                                                            supports_target=lambda t: False))
    hc.register_host_codegen_hook("dev", hc.HostCodegenHook("second", apply=lambda m, th, t: [*m, "second"]))
    assert hc.apply_host_codegen_hooks([], {"kind": "llvm"}, {"kind": "dev"}) == ["first", "second"]
    assert hc.apply_host_codegen_hooks([], {"kind": "llvm"}, {"kind": "otherdev"}) == []


def test_lazy_hooks(tmp_path, monkeypatch):
    (tmp_path / "my_hooks.py").write_text(
        "from tilelang.backend import HostCodegenHook\n"
        "HOOKS = [HostCodegenHook('one', apply=lambda m, th, t: m + 1),"
        " HostCodegenHook('two', apply=lambda m, th, t: m * 10)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hc.register_lazy_host_codegen_hooks("lazydev", "my_hooks:HOOKS")
    assert hc.apply_host_codegen_hooks(1, {"kind": "llvm"}, {"kind": "lazydev"}) == 20


def test_lazy_registration_by_module_path(tmp_path, monkeypatch):
    # TileLang 0.1.14's form: a module path whose import registers the codegen / hooks itself
    (tmp_path / "self_registering.py").write_text(
        "from tilelang.backend import HostCodegen, HostCodegenHook, register_host_codegen, "
        "register_host_codegen_hook\n"
        "register_host_codegen('modhost', HostCodegen('modcg', build=lambda m, t: ('built', m)))\n"
        "register_host_codegen_hook('moddev', HostCodegenHook('h', apply=lambda m, th, t: m + 5))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    hc.register_lazy_host_codegen("modhost", "self_registering")
    hc.register_lazy_host_codegen_hooks("moddev", "self_registering")
    assert "self_registering" not in sys.modules
    assert hc.allowed_host_codegens_for_target({"kind": "modhost"}) == ["modcg"]
    assert hc.apply_host_codegen_hooks(1, {"kind": "llvm"}, {"kind": "moddev"}) == 6
    with pytest.raises(ValueError, match="must look like"):
        hc.register_lazy_host_codegen("modhost", "not a path")
    del sys.modules["self_registering"]


def test_global_func_host_codegen_calls_the_tvm_global():
    import tvm_ffi

    seen = []
    tvm_ffi.register_global_func("tilelang.test.fake_build", lambda mod, target: seen.append((mod, target)) or 7,
                                 override=True)
    build = hc.global_func_host_codegen("tilelang.test.fake_build")
    assert build(3, 4) == 7 and seen == [(3, 4)]
    with pytest.raises(NoImplementationError, match="not available in this TVM build"):
        hc.global_func_host_codegen("tilelang.test.no_such_global")(1, 2)
