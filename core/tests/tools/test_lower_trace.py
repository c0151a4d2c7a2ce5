"""Lower trace: one record per pass of a real compilation, the report and snapshot files, the codegen record
and the edit-and-recompile workflow, and the `lower_trace` chain API."""

from __future__ import annotations

import os

import pytest
import tvm
from tvm import tirx

import tilelang
from tilelang.instrumentation import PassEventObserver, StackedPassInstrument
from tilelang.tools.lower_trace import core, lower_trace

from .kernels import add_one, tiled_gemm


@pytest.fixture(autouse=True)
def _no_trace(monkeypatch):
    monkeypatch.delenv("TL_LOWER_TRACE", raising=False)
    monkeypatch.delenv("TL_LOWER_TRACE_DIR", raising=False)
    core.disable()
    yield
    core.disable()


class _Count(PassEventObserver):
    def __init__(self):
        self.names = []

    def pass_finished(self, mod, event, state):
        self.names.append(event.name)


@pytest.mark.backend("llvm")
def test_trace_has_one_record_per_pass_run_and_writes_the_report(tmp_path, capsys):
    counter = _Count()
    core.enable(mode="both", trace_dir=str(tmp_path))
    with tvm.transform.PassContext(instruments=[StackedPassInstrument(counter)]):
        tilelang.lower(tiled_gemm(), target="llvm")
    trace = core.get_last_session()
    passes = [r for r in trace.records if r.status != core.STATUS_CODEGEN]
    # exactly the passes TVM reported (the enclosing context's instrument sees the same runs)
    assert sorted(r.name for r in passes) == sorted(n.rsplit(".", 1)[-1] for n in counter.names)
    assert [r.index for r in trace.records] == sorted({r.index for r in trace.records})
    assert {r.phase for r in passes if not r.name.endswith("Checker")} == {"pipeline_llvm"}
    assert {r.phase for r in passes if r.name.endswith("Checker")} == {"unscoped"}  # the pre-lowering checks
    lowered = next(r for r in passes if r.name == "LowerTileOps")
    assert lowered.changed and "tl.gemm" in lowered.before_text and "tl.gemm" not in lowered.after_text
    assert lowered.add_lines > 0 and lowered.del_lines > 0
    (codegen,) = [r for r in trace.records if r.status == core.STATUS_CODEGEN]
    assert codegen.index == max(r.index for r in trace.records) and "define" in codegen.after_text

    report = os.path.join(trace.script_dir, "report.html")
    html = open(report).read()
    for r in passes:
        assert f'data-index="{r.index}"' in html
    assert 'id="theme-btn"' in html and "lower-trace-theme" in html
    snapshots = os.listdir(os.path.join(trace.run_dir, "pipeline_llvm"))
    assert f"{lowered.index:02d}_LowerTileOps_after.tir" in snapshots
    assert open(os.path.join(trace.script_dir, "codegen.cpp")).read() == codegen.after_text
    out = capsys.readouterr().out
    assert "pipeline_llvm/" in out and "LowerTileOps: " in out and "CHANGED" in out


@pytest.mark.backend("c")
def test_edited_source_is_used_by_a_source_only_code_generator(tmp_path):
    core.enable(mode="html", trace_dir=str(tmp_path))
    first = tilelang.lower(add_one(), target="c")
    path = os.path.join(core.get_last_session().script_dir, "codegen.cpp")
    edited = first.kernel_source.replace("1.000000e+00f", "2.000000e+00f")
    assert edited != first.kernel_source
    with open(path, "w") as f:
        f.write(edited)
    second = tilelang.lower(add_one(), target="c")
    assert "2.000000e+00f" in second.kernel_source  # PATCHED: the user's copy replaced the generated source
    assert open(path + ".original").read() == first.kernel_source


def test_env_mode_parsing(monkeypatch):
    for value, mode in (("0", None), ("off", None), ("1", "html"), ("yes", "html"), ("terminal", "terminal"),
                        ("both", "both"), ("html", "html")):
        monkeypatch.setenv("TL_LOWER_TRACE", value)
        assert core._get_mode() == mode
    core.enable(mode="terminal")
    monkeypatch.setenv("TL_LOWER_TRACE", "html")
    assert core._get_mode() == "terminal"  # enable() overrides the environment


def test_lower_trace_chain_diff_and_partial_report_on_failure(tmp_path, capsys):
    @tvm.transform.module_pass(opt_level=0, name="test.Boom")
    def boom(mod, ctx):
        raise RuntimeError("boom")

    func = add_one()
    res = lower_trace(func, [("Simplify", tirx.transform.StmtSimplify()), tirx.transform.RemoveNoOp()],
                      mode="terminal")
    assert [r["name"] for r in res] == ["Simplify", "RemoveNoOp"]
    assert all(r["before_script"] == tvm.IRModule({"main": func}).script() for r in res[:1])
    assert "Pass 1: Simplify" in capsys.readouterr().out

    report = tmp_path / "partial.html"
    with pytest.raises(RuntimeError, match="boom"):
        lower_trace(func, [tirx.transform.StmtSimplify(), ("Boom", boom)], mode="html", html_path=str(report))
    html = report.read_text()
    assert "StmtSimplify" in html and "Boom" in html and "FAILED" in html
    with pytest.raises(ValueError, match="mode must be"):
        lower_trace(func, [], mode="pdf")
