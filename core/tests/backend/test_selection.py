"""Tile-op implementations, execution backends and pass extension points: how one is chosen."""

from __future__ import annotations

import pytest

from tilelang.backend import (
    EXTENSION_POINTS,
    ExecutionBackend,
    PipelinePass,
    TargetKind,
    TileOpImpl,
    hookimpl,
    passes_at,
    plugin_manager,
    register_execution_backends,
    register_pass,
    register_target_kind,
    register_tile_op_impl,
    resolve_execution_backend,
    resolve_tile_op_impl,
)
from tilelang.errors import AmbiguousImplementationError, ExecutionBackendUnavailable, NoImplementationError

pytestmark = pytest.mark.usefixtures("fresh_registries")


def impl(name, priority=0, kinds=None, applies=None, op="tl.testop"):
    pred = None if kinds is None else (lambda t: t["kind"] in kinds)
    return TileOpImpl(op, name, lower=lambda ctx: name, supports_target=pred, applies=applies, priority=priority)


class TestTileOps:
    def test_generic_serves_every_target_and_specialised_wins_by_priority(self):
        register_tile_op_impl(impl("generic"))
        register_tile_op_impl(impl("fast", priority=10, kinds={"gpu"}), target_kind="gpu")
        assert resolve_tile_op_impl("tl.testop", {"kind": "cpu"}).name == "generic"
        assert resolve_tile_op_impl("tl.testop", {"kind": "gpu"}).name == "fast"

    def test_applies_predicate_refuses_instances(self):
        register_tile_op_impl(impl("generic"))
        register_tile_op_impl(impl("fp16only", priority=5, applies=lambda ctx: ctx == "fp16"))
        assert resolve_tile_op_impl("tl.testop", {"kind": "x"}, ctx="fp16").name == "fp16only"
        assert resolve_tile_op_impl("tl.testop", {"kind": "x"}, ctx="fp32").name == "generic"

    def test_two_equal_matches_are_an_error(self):
        register_tile_op_impl(impl("one", priority=3))
        register_tile_op_impl(impl("two", priority=3))
        expected = "2 candidates for implementation of tl.testop .*equal priority 3: 'one', 'two'"
        with pytest.raises(AmbiguousImplementationError, match=expected):
            resolve_tile_op_impl("tl.testop", {"kind": "x"})

    def test_no_match_is_an_error_listing_candidates(self):
        register_tile_op_impl(impl("gpuonly", kinds={"gpu"}))
        with pytest.raises(NoImplementationError, match="no implementation of tl.testop.*gpuonly"):
            resolve_tile_op_impl("tl.testop", {"kind": "cpu"})
        with pytest.raises(NoImplementationError, match="tl.otherop"):
            resolve_tile_op_impl("tl.otherop", {"kind": "cpu"})


class FakeExec(ExecutionBackend):
    def __init__(self, name, reason=None):
        self.name, self.reason = name, reason

    def unavailable_reason(self):
        return self.reason

    def load(self, artifact):
        return lambda *args: (self.name, artifact, args)


class TestExecutionBackends:
    @pytest.fixture(autouse=True)
    def _kind(self, monkeypatch, fresh_registries):
        monkeypatch.delenv("TILELANG_EXECUTION_BACKEND", raising=False)
        register_target_kind(TargetKind("exk"))

    def test_auto_takes_the_first_available(self):
        register_execution_backends("exk", [FakeExec("fast", "needs a GPU"), FakeExec("slow")])
        assert resolve_execution_backend({"kind": "exk"}).name == "slow"
        assert resolve_execution_backend({"kind": "exk"}, "slow").load("A")(1) == ("slow", "A", (1,))

    def test_env_overrides_auto(self, monkeypatch):
        register_execution_backends("exk", [FakeExec("a"), FakeExec("b")])
        monkeypatch.setenv("TILELANG_EXECUTION_BACKEND", "b")
        assert resolve_execution_backend({"kind": "exk"}).name == "b"

    def test_unavailable_and_unknown_names_say_why(self):
        register_execution_backends("exk", [FakeExec("fast", "needs a GPU")])
        with pytest.raises(ExecutionBackendUnavailable, match="'fast' cannot run here: needs a GPU"):
            resolve_execution_backend({"kind": "exk"}, "fast")
        with pytest.raises(ExecutionBackendUnavailable, match="fast: needs a GPU.*get_kernel_source"):
            resolve_execution_backend({"kind": "exk"})
        with pytest.raises(ExecutionBackendUnavailable, match="Invalid execution backend 'nope'.*Allowed: fast"):
            resolve_execution_backend({"kind": "exk"}, "nope")

    def test_backend_must_be_an_instance_with_a_name(self):
        with pytest.raises(TypeError, match="expected an ExecutionBackend instance"):
            register_execution_backends("exk", [FakeExec])
        with pytest.raises(TypeError, match="empty name"):
            register_execution_backends("exk", [FakeExec("")])


class TestPasses:
    def test_passes_run_by_priority_then_registration_order_and_predicate(self):
        register_pass("pk", PipelinePass("late", "post_layout", factory=lambda t: "late"))
        register_pass("pk", PipelinePass("early", "post_layout", factory=lambda t: "early", priority=5))
        register_pass("pk", PipelinePass("late2", "post_layout", factory=lambda t: "late2"))
        register_pass("pk", PipelinePass("never", "post_layout", factory=lambda t: "never",
                                         supports_target=lambda t: False))
        register_pass("pk", PipelinePass("other", "device_module", factory=lambda t: "other"))
        assert passes_at("post_layout", {"kind": "pk"}) == ["early", "late", "late2"]
        assert passes_at("device_module", {"kind": "pk"}) == ["other"]
        assert passes_at("post_layout", {"kind": "unrelated"}) == []

    def test_unknown_point_is_refused(self):
        with pytest.raises(ValueError, match="unknown pipeline extension point 'post_lunch'"):
            PipelinePass("p", "post_lunch", factory=lambda t: None)
        with pytest.raises(ValueError, match="known points: pre_layout"):
            passes_at("post_lunch", {"kind": "pk"})
        assert "device_module" in EXTENSION_POINTS

    def test_pipeline_hook_adds_passes(self):
        class Extender:
            @hookimpl
            def tilelang_extend_pipeline(self, point, target):
                return [f"hooked@{point}"] if target["kind"] == "pk" else None

        pm = plugin_manager()
        pm.register(Extender(), name="extender")
        try:
            register_pass("pk", PipelinePass("mine", "post_barriers", factory=lambda t: "mine"))
            assert passes_at("post_barriers", {"kind": "pk"}) == ["mine", "hooked@post_barriers"]
        finally:
            pm.unregister(name="extender")
