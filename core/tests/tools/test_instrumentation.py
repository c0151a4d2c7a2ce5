"""Pass events and compile sessions (`tilelang.instrumentation`), on real TVM pass contexts and on a real
`tilelang.lower`."""

from __future__ import annotations

import pytest
import tvm
from tvm import tirx

import tilelang
from tilelang.instrumentation import (
    PassEventObserver,
    PassInstrumentationTool,
    StackedPassInstrument,
    active_stacked_pass_instruments,
    compile_pass_instrumentation,
    create_pass_instruments,
    current_compile_pass_instrumentation,
    current_pass_phase,
    register_pass_instrumentation_tool,
    unregister_pass_instrumentation_tool,
)

from .kernels import add_one


class Recorder(PassEventObserver):
    def __init__(self):
        self.events = []
        self.incomplete = []

    def pass_started(self, mod, event):
        return len(str(mod))

    def pass_finished(self, mod, event, state):
        self.events.append(event)

    def passes_incomplete(self, passes, error):
        self.incomplete.append(([p.name for p in passes], str(error)))


def _outer_pass():
    @tvm.transform.module_pass(opt_level=0, name="test.Outer")
    def outer(mod, ctx):
        return tirx.transform.RemoveNoOp()(tirx.transform.StmtSimplify()(mod))

    return outer


def test_nested_tvm_passes_get_depth_parent_and_phase():
    rec = Recorder()
    inst = StackedPassInstrument(rec)
    mod = tvm.IRModule({"main": add_one()})
    from tilelang.instrumentation import pass_phase

    with pass_phase("unit"), tvm.transform.PassContext(instruments=[inst]):
        _outer_pass()(mod)
    by_name = {e.name: e for e in rec.events}
    assert set(by_name) == {"test.Outer", "tirx.StmtSimplify", "tirx.RemoveNoOp"}
    outer = by_name["test.Outer"]
    assert (outer.depth, outer.parent_sequence, outer.sequence) == (0, None, 0)
    assert [by_name[n].parent_sequence for n in ("tirx.StmtSimplify", "tirx.RemoveNoOp")] == [0, 0]
    assert {e.phase for e in rec.events} == {"unit"}
    assert active_stacked_pass_instruments() == ()


def test_failing_pass_is_reported_incomplete_with_its_ancestors():
    rec = Recorder()
    inst = StackedPassInstrument(rec)

    @tvm.transform.module_pass(opt_level=0, name="test.Boom")
    def boom(mod, ctx):
        raise RuntimeError("boom")

    @tvm.transform.module_pass(opt_level=0, name="test.Wrapper")
    def wrapper(mod, ctx):
        return boom(mod)

    with pytest.raises(RuntimeError, match="boom"), tvm.transform.PassContext(instruments=[inst]):
        wrapper(tvm.IRModule({"main": add_one()}))
    assert rec.incomplete and rec.incomplete[0][0] == ["test.Wrapper", "test.Boom"]


class CountingTool(PassInstrumentationTool):
    def __init__(self):
        self.rec = Recorder()
        self.phases = []
        self.codegen = []
        self.finished = None

    def create_pass_instrument(self):
        return StackedPassInstrument(self.rec, capture_nested=False)

    def pipeline_scope(self, base_phase):
        self.phases.append(base_phase)
        return super().pipeline_scope(base_phase)

    def run_codegen(self, event, next_call):
        self.codegen.append(event.name)
        return next_call()

    def finish(self, error):
        self.finished = error


@pytest.mark.backend("llvm")
def test_lower_opens_a_session_runs_the_registered_tool_and_labels_the_pipeline():
    tools = []
    register_pass_instrumentation_tool("test-counting", lambda: tools.append(CountingTool()) or tools[-1])
    try:
        artifact = tilelang.lower(add_one(), target="llvm")
    finally:
        unregister_pass_instrumentation_tool("test-counting")
    assert artifact.kernel_source
    (tool,) = tools
    names = [e.name for e in tool.rec.events]
    # every stage of the core pipeline was observed, in order, once
    for stage in ("tl.CheckSemantics", "tl.LayoutInference", "tl.LowerTileOps", "tl.PlanSharedMemory"):
        assert names.count(stage) == 1, names
    assert names.index("tl.LayoutInference") < names.index("tl.LowerTileOps")
    checks = {"tl.NestedLoopChecker", "tl.ParallelLocalIndexChecker", "tl.FragmentLoopChecker"}
    assert {e.name for e in tool.rec.events if e.phase is None} == checks  # before the pipeline, in the session
    assert names.index("tl.FragmentLoopChecker") < names.index("tl.CheckSemantics")
    assert {e.phase for e in tool.rec.events if e.name not in checks} == {"pipeline_llvm"}
    assert tool.phases == ["pipeline_llvm"]
    assert tool.codegen == ["target.build.tilelang_llvm"]
    assert tool.finished is None
    assert current_compile_pass_instrumentation() is None and current_pass_phase() is None


def test_explicit_tools_and_nested_sessions():
    tool = CountingTool()
    with compile_pass_instrumentation(name="outer", tools=[tool], include_default_tools=False) as session:
        with compile_pass_instrumentation(name="inner") as inner:
            assert inner is session
        with pytest.raises(ValueError, match="already active"), compile_pass_instrumentation(tools=[CountingTool()]):
            pass
        first, second = create_pass_instruments(), create_pass_instruments()
        assert len(first) == len(second) == 1 and first[0] is not second[0]
    assert tool.finished is None
    with pytest.raises(KeyError), compile_pass_instrumentation(tools=[tool], include_default_tools=False):
        raise KeyError("compile failed")
    assert isinstance(tool.finished, KeyError)


@pytest.mark.backend("llvm")
def test_instruments_already_in_the_enclosing_context_are_not_added_twice():
    tool = CountingTool()
    with compile_pass_instrumentation(name="outer", tools=[tool], include_default_tools=False):
        with tvm.transform.PassContext(instruments=create_pass_instruments()):
            tilelang.lower(add_one(), target="llvm")
    names = [e.name for e in tool.rec.events]
    assert names.count("tl.LowerTileOps") == 1 and names.count("tl.CheckSemantics") == 1
