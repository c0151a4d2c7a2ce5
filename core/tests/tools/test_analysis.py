"""The reference's pre-lowering checks (`tilelang.analysis`) on their own and inside `tilelang.lower`, and the
IR inspectors (AST printer, layout visualisation)."""

from __future__ import annotations

import pytest
import tvm

import tilelang
from tilelang.analysis import (
    ASTPrinter,
    FragmentLoopChecker,
    LayoutVisual,
    NestedLoopChecker,
    ParallelLocalIndexChecker,
    semantic_check,
)

from .kernels import add_one, copy_inside_parallel, local_indexed_by_parallel, symbolic_parallel_on_fragment, tiled_gemm


def _mod(func):
    return tvm.IRModule({"main": func})


def test_each_checker_rejects_its_pattern_and_accepts_valid_kernels():
    with pytest.raises(ValueError, match=r"Local buffer `acc` is indexed by T.Parallel loop variable `i`"):
        ParallelLocalIndexChecker()(_mod(local_indexed_by_parallel()))
    with pytest.raises(ValueError, match="Nested parallel loops are not allowed"):
        NestedLoopChecker()(_mod(copy_inside_parallel()))
    with pytest.raises(ValueError, match=r"symbolic range .* is used to index a fragment buffer"):
        FragmentLoopChecker()(_mod(symbolic_parallel_on_fragment()))
    for good in (add_one(), tiled_gemm(stages=2)):
        mod = _mod(good)
        for check in (NestedLoopChecker, ParallelLocalIndexChecker, FragmentLoopChecker):
            assert check()(mod).same_as(mod) or tvm.ir.structural_equal(check()(mod), mod)


def test_lower_runs_the_checks_first_and_they_can_be_disabled():
    with pytest.raises(ValueError, match="Tilelang Semantic Check"):
        tilelang.lower(local_indexed_by_parallel(), target="c")
    semantic_check(local_indexed_by_parallel(), {"tl.disable_prelower_semantic_check": True})  # no error


def test_ast_printer_shows_the_statement_tree(capsys):
    ASTPrinter()(_mod(add_one()))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("PrimFunc(params=['A', 'B']")
    assert out[1] == "└── body=AttrStmt"
    assert any("attr_key" in ln and "thread_extent" in ln for ln in out)
    assert any(ln.strip().startswith("└── body(Stmt): BufferStore") for ln in out)


@pytest.mark.backend("cuda")
def test_layout_visual_prints_and_plots_fragment_layouts(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from tvm.target import Target

    from tilelang.transform.layout_inference import LayoutInference

    target = Target({"kind": "cuda", "arch": "sm_80"})
    mod = LayoutInference(target)(tvm.tirx.transform.BindTarget(target)(_mod(tiled_gemm())))
    LayoutVisual("png", save_directory=str(tmp_path))(mod)
    out = capsys.readouterr().out
    assert "C_f inferred layout:" in out and "Shape: [32, 32]" in out
    assert (tmp_path / "C_f_layout.png").stat().st_size > 1000
