"""Target spellings, normalisers, detectors and determine_target("auto")."""

from __future__ import annotations

import pytest

from tilelang.backend import TargetKind, determine_target, kind_of, normalize_target, register_target_kind
from tilelang.backend import target as target_module
from tilelang.backend.target import _KINDS
from tilelang.errors import BackendNotInstalled, InvalidTargetError, TargetError

pytestmark = pytest.mark.usefixtures("fresh_registries")


@pytest.fixture
def kinds(monkeypatch, fresh_registries):
    from tilelang.backend import plugins

    monkeypatch.setattr(plugins, "_read_entry_points", lambda: [])
    plugins.reset()
    _KINDS._restore(({}, {}))  # no kind registered by backends loaded earlier in this process
    target_module._TARGET_DETECTORS.clear()
    target_module._mirrored_detectors.clear()
    monkeypatch.delenv("TILELANG_DEFAULT_TARGET", raising=False)
    register_target_kind(TargetKind("gpu1", normalize=lambda c: {"arch": "v1", **c}, detect=lambda: None,
                                    detect_priority=50))
    register_target_kind(TargetKind("gpu2", detect=lambda: {"kind": "gpu2", "arch": "found"}, detect_priority=40))
    register_target_kind(TargetKind("slowcpu", detect=lambda: {"kind": "slowcpu"}, detect_priority=-100))
    register_target_kind(TargetKind("alias1", normalize=lambda c: {**c, "kind": "gpu1"}))
    yield
    plugins.reset()


@pytest.mark.usefixtures("kinds")
class TestSpellings:
    def test_plain_kind(self):
        assert normalize_target("gpu1") == {"kind": "gpu1", "arch": "v1"}

    def test_dict_keeps_options(self):
        assert normalize_target({"kind": "gpu1", "arch": "v9"}) == {"kind": "gpu1", "arch": "v9"}

    def test_option_strings_are_refused_with_the_dict_spelling(self):
        # as in the reference TileLang (TVM 0.27 parses no option strings): the message shows the dict to pass
        with pytest.raises(InvalidTargetError, match=r"Pass target options as a dict.*'arch': 'sm_80'.*512"):
            normalize_target("gpu2 -arch=sm_80 -max_threads=512 -fast")
        with pytest.raises(AssertionError, match="Pass target options as a dict"):
            normalize_target("gpu2 -arch=sm_80")

    def test_alias_kind_is_followed(self):
        assert normalize_target("alias1") == {"kind": "gpu1", "arch": "v1"}

    def test_bad_spellings(self):
        with pytest.raises(TargetError, match="needs a 'kind'"):
            normalize_target({"arch": "x"})
        with pytest.raises(TargetError, match="expected -key=value"):
            normalize_target("gpu1 arch")
        with pytest.raises(InvalidTargetError, match="empty"):
            normalize_target("  ")
        with pytest.raises(TargetError, match="cannot use 3"):
            normalize_target(3)

    def test_unknown_kind_names_the_distribution(self):
        with pytest.raises(BackendNotInstalled, match=r"'nosuch'.*pip install tilelang-nosuch"):
            normalize_target("nosuch")

    def test_first_party_alias_hint(self):
        with pytest.raises(BackendNotInstalled, match="pip install tilelang-rocm"):
            normalize_target("hip")

    def test_auto_takes_the_best_detected_device(self):
        assert determine_target("auto") == {"kind": "gpu2", "arch": "found"}
        assert determine_target(None) == {"kind": "gpu2", "arch": "found"}

    def test_env_overrides_auto(self, monkeypatch):
        monkeypatch.setenv("TILELANG_DEFAULT_TARGET", '{"kind": "gpu1", "arch": "v7"}')
        assert determine_target() == {"kind": "gpu1", "arch": "v7"}
        monkeypatch.setenv("TILELANG_DEFAULT_TARGET", "gpu2")
        assert determine_target() == {"kind": "gpu2"}

    def test_tvm_target_object_and_context(self):
        from tvm.target import Target

        register_target_kind(TargetKind("llvm"), override=True)
        assert determine_target(Target({"kind": "llvm", "mcpu": "znver4"}))["mcpu"] == "znver4"
        with Target({"kind": "llvm", "mcpu": "skylake"}):
            assert determine_target("auto")["mcpu"] == "skylake"
        obj = determine_target({"kind": "llvm"}, return_object=True)
        assert isinstance(obj, Target) and obj.kind.name == "llvm"

    def test_broken_detector_is_reported_and_skipped(self):
        def boom():
            raise RuntimeError("driver exploded")

        register_target_kind(TargetKind("flaky", detect=boom, detect_priority=99))
        with pytest.warns(UserWarning, match="driver exploded"):
            assert determine_target("auto")["kind"] == "gpu2"


def test_kind_of_accepts_every_spelling():
    from tvm.target import Target

    assert kind_of("cuda -arch=sm_80") == "cuda"
    assert kind_of({"kind": "metal"}) == "metal"
    assert kind_of(Target({"kind": "llvm"})) == "llvm"
    with pytest.raises(TargetError):
        kind_of(42)


def test_target_kind_validates_its_name():
    with pytest.raises(TypeError, match="identifier"):
        TargetKind("not a kind")


# ------------------------------------------------------------------------------------ split_targets: one resolution
def test_split_targets_resolves_device_and_host_once(kinds):
    import pickle

    from tilelang.backend import TargetPair, split_targets

    register_target_kind(TargetKind("hostish", to_tvm=lambda c: {**c, "kind": "c"}))
    pair = split_targets("gpu1")
    assert pair.device == {"kind": "gpu1", "arch": "v1"} and pair.host == {"kind": "llvm"} and not pair.on_host
    assert split_targets("hostish").host == {"kind": "hostish"} and split_targets("hostish").on_host
    assert split_targets("gpu1", {"kind": "c"}).host == {"kind": "c"}
    assert split_targets({"kind": "gpu1", "host": {"kind": "c"}}).host == {"kind": "c"}
    assert split_targets(pair) is pair  # already resolved: handed down as is
    assert split_targets("auto").device == {"kind": "gpu2", "arch": "found"}
    back = pickle.loads(pickle.dumps(pair))  # compile workers get the configs, not TVM objects
    assert (back.device, back.host, back._tvm) == (pair.device, pair.host, {})
    assert TargetPair.from_config(pair.config()).device == pair.device
    with pytest.raises(TargetError, match="not a resolved target pair"):
        TargetPair.from_config({"kind": "gpu1"})


def test_on_host_is_decided_without_tvm(kinds, monkeypatch):
    from tilelang.backend import split_targets

    register_target_kind(TargetKind("hostish", to_tvm=lambda c: {**c, "kind": "c"}))
    monkeypatch.setattr(target_module, "tvm_target", lambda *_: pytest.fail("TVM target built for on_host"))
    assert split_targets("hostish").on_host and not split_targets("gpu1").on_host
