"""Pass diff: the chain API on real passes, the HTML report structure, and the ``TILELANG_PASS_DIFF`` hook
diffing every pass of a real compilation."""

from __future__ import annotations

import difflib
import re

import pytest
from tvm import tirx

import tilelang
from tilelang.utils import pass_diff_hook
from tilelang.utils.pass_diff import (
    _compute_diff,
    _generate_html,
    _parse_diff_into_rows,
    _split_rows_by_hunk,
    pass_diff,
)

from .kernels import add_one, tiled_gemm


@pytest.fixture(autouse=True)
def _hook_off(monkeypatch):
    monkeypatch.setenv("TILELANG_PASS_DIFF", "0")
    pass_diff_hook.uninstall_pass_diff_hook()
    yield
    pass_diff_hook.uninstall_pass_diff_hook()


def _lower_tile_ops():
    from tvm.target import Target

    from tilelang.transform.layout_inference import LayoutInference
    from tilelang.transform.lower_tile_ops import LowerTileOps

    target = Target({"kind": "llvm"})
    return [("LayoutInference", LayoutInference(target)), ("LowerTileOps", LowerTileOps(target))]


@pytest.mark.backend("llvm")
def test_chain_reports_what_each_pass_changed(capsys):
    results = pass_diff(tiled_gemm(), [("Noop", tirx.transform.RemoveNoOp()), *_lower_tile_ops()], mode="terminal")
    assert [r["name"] for r in results] == ["Noop", "LayoutInference", "LowerTileOps"]
    noop, infer, lower = results
    assert infer["changed"]  # LayoutInference annotates the fragment
    assert not noop["changed"] and noop["diff_lines"] == []
    assert lower["changed"] and lower["deletions"] > 0 and lower["insertions"] > 0
    deleted = [d for d in lower["diff_lines"] if d.startswith("-") and not d.startswith("---")]
    assert any("T.tl.gemm" in d for d in deleted) and "T.tl.gemm" not in lower["after_script"]
    assert results[1]["after_script"] == results[2]["before_script"]  # each pass starts where the last ended
    out = capsys.readouterr().out
    assert "Pass 3/3: LowerTileOps" in out and f"+{lower['insertions']} insertion(s)" in out


def test_rows_and_hunks_match_difflib():
    before = [f"line {i}" for i in range(60)]
    after = list(before)
    after[5], after[40] = "changed 5", "changed 40"
    after.insert(50, "inserted")
    diff = _compute_diff(before, after, context=2)
    rows, sections = _parse_diff_into_rows(diff, before, after)
    hunks = _split_rows_by_hunk(rows)
    assert len(hunks) == sum(1 for d in diff if d.startswith("@@"))
    pairs = [(r["left"], r["right"]) for r in rows if r["type"] == "pair"]
    assert ("line 5", "changed 5") in pairs and ("line 40", "changed 40") in pairs
    assert [r["right"] for r in rows if r["type"] == "add"] == ["inserted"]
    # the folded context covers exactly the lines between hunks (capped at 20) and after the last one
    above_first = next(s for s in sections if s["hunk_idx"] == 0 and s["position"] == "before")
    assert [ln["left_num"] for ln in above_first["lines"]] == [1, 2, 3]
    tail = next(s for s in sections if s["position"] == "after")
    assert tail["lines"][-1]["right"] == "line 59"
    assert sum(1 for tag, *_ in difflib.SequenceMatcher(None, before, after).get_opcodes() if tag != "equal") == 3


@pytest.mark.backend("llvm")
def test_html_report(tmp_path):
    path = tmp_path / "report.html"
    results = pass_diff(tiled_gemm(), _lower_tile_ops(), mode="html", html_path=str(path))
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "Pass Diff Report" in html
    assert html.count('class="pass-section') == 2 and "LowerTileOps" in html
    assert f"+{results[1]['insertions']} / \u2212{results[1]['deletions']}" in html
    assert len(re.findall(r'<table class="diff-table">', html)) >= sum(
        1 for d in results[1]["diff_lines"] if d.startswith("@@"))
    assert _generate_html([], str(tmp_path / "empty.html")).endswith("empty.html")


@pytest.mark.backend("llvm")
def test_env_hook_diffs_every_pass_of_a_compilation(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TILELANG_PASS_DIFF", "both")
    monkeypatch.setenv("TILELANG_PASS_DIFF_OUTPUT", str(tmp_path))
    tilelang.lower(add_one(), target="llvm")  # the first compilation installs the hook
    assert pass_diff_hook._original_call is not None
    out = capsys.readouterr().out
    steps = re.findall(r"Pass (\d+)/\u221e: ([\w.]+)", re.sub(r"\x1b\[[0-9;]*m", "", out))
    assert steps and [int(n) for n, _ in steps] == list(range(1, len(steps) + 1))
    assert {"tl.LowerTileOps", "tirx.MakePackedAPI"} <= {name for _, name in steps}
    html = open(pass_diff_hook._html_path).read()
    assert html.count('class="pass-section') == len(steps)
    pass_diff_hook.uninstall_pass_diff_hook()
    from tvm.ir.transform import Pass

    assert Pass.__call__ is not pass_diff_hook._diffing_call
