"""Pass timing on real compilations: the ``tl.pass_profile`` config and the instrument on its own."""

from __future__ import annotations

import logging

import pytest
import tvm
from tvm import tirx

import tilelang
from tilelang.tools.pass_timing import PassTimingTool, TileLangPassTimingInstrument, create_pass_timing_tool

from .kernels import add_one


@pytest.mark.backend("llvm")
def test_pass_profile_config_reports_every_pipeline_pass(caplog):
    with caplog.at_level(logging.INFO, logger="tilelang.pass_timing"):
        tilelang.lower(add_one(), target="llvm", pass_configs={"tl.pass_profile": True})
    (report,) = [r.getMessage() for r in caplog.records if r.name == "tilelang.pass_timing"]
    assert "TileLang Pass Timing Report" in report and "Context: kernel=add_one" in report
    for name in ("tl.CheckSemantics", "tl.LayoutInference", "tl.LowerTileOps", "tirx.MakePackedAPI"):
        assert f"{name}(add_one)" in report


def test_instrument_times_nested_passes(monkeypatch):
    timing = TileLangPassTimingInstrument()

    @tvm.transform.module_pass(opt_level=0, name="test.Outer")
    def outer(mod, ctx):
        return tirx.transform.RemoveNoOp()(tirx.transform.StmtSimplify()(mod))

    with tvm.transform.PassContext(instruments=[timing.instrument]):
        outer(tvm.IRModule({"main": add_one()}))
    records = timing.records
    assert [r.name for r in records] == ["test.Outer", "tirx.StmtSimplify", "tirx.RemoveNoOp"]
    top, *children = records
    assert top.depth == 0 and all(c.depth == 1 for c in children)
    assert top.self_duration_s == pytest.approx(top.duration_s - sum(c.duration_s for c in children), abs=1e-6)
    assert timing.total_duration_s == top.duration_s


def test_threshold_and_tool_creation(monkeypatch):
    monkeypatch.delenv("TILELANG_PASS_PROFILE", raising=False)
    assert create_pass_timing_tool({}) is None
    tool = create_pass_timing_tool({"tl.pass_profile": True, "tl.pass_profile_threshold_ms": 2.5})
    assert isinstance(tool, PassTimingTool) and tool.threshold_ms == 2.5
    monkeypatch.setenv("TILELANG_PASS_PROFILE", "1")
    monkeypatch.setenv("TILELANG_PASS_PROFILE_THRESHOLD_MS", "7")
    assert create_pass_timing_tool(None).threshold_ms == 7.0
    with pytest.raises(ValueError, match="non-negative"):
        create_pass_timing_tool({"tl.pass_profile_threshold_ms": -1})
