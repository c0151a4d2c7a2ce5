"""Pass visualizer: structure trees, the per-pass instrument, and the browser built from the real CUDA pipeline."""

from __future__ import annotations

import os

import pytest
import tvm
from tvm import tirx

import tilelang.tools.pass_visualizer as pv
from tilelang.tools.pass_visualizer import StructureTreePassInstrument, capture_structure, viewer

from .kernels import tiled_gemm

EXAMPLE = os.path.join(os.path.dirname(pv.__file__), "examples", "gemm_relu.py")
SIZES = {"M": 128, "N": 128, "K": 128, "block_M": 64, "block_N": 64, "block_K": 32}


def test_tree_expands_tile_ops_by_field():
    lines = capture_structure(tvm.IRModule({"main": tiled_gemm(stages=2)}))
    text = "\n".join(lines)
    assert lines[0] == "PrimFunc `main`"
    assert "AllocBuffer: Buffer(C_f, shape=[32, 32], dtype=float32, scope=local.fragment)" in text
    assert "@ann tl.pipeline_stages = 2" in text
    gemm = lines.index(next(ln for ln in lines if ln.strip() == "Evaluate: T.gemm"))
    fields = [ln.split("=")[0].strip(" ├└─") for ln in lines[gemm + 1:gemm + 8]]
    assert fields == ["a_region", "b_region", "c_region", "trans_A", "trans_B", "policy", "clear_accum"]


def test_instrument_records_top_level_passes_only():
    inst = StructureTreePassInstrument()

    @tvm.transform.module_pass(opt_level=0, name="test.Outer")
    def outer(mod, ctx):
        return tirx.transform.StmtSimplify()(mod)

    mod = tvm.IRModule({"main": tiled_gemm()})
    with tvm.transform.PassContext(instruments=[inst]):
        outer(tirx.transform.RemoveNoOp()(mod))
    assert [r.name for r in inst.ordered_records()] == ["tirx.RemoveNoOp", "test.Outer"]
    assert inst.input_lines == capture_structure(mod)


@pytest.mark.backend("cuda")
def test_browser_of_the_cuda_pipeline(tmp_path):
    name, stages = viewer.build_pass_data(EXAMPLE, None, {"kind": "cuda", "arch": "sm_80"}, SIZES,
                                          open(EXAMPLE).read())
    assert name == "gemm_relu"
    assert [s["flag"] for s in stages[:2]] == ["source", "input"]
    names = [s["name"].split("] ", 1)[-1] for s in stages[2:]]
    assert names.index("LayoutInference") < names.index("LowerTileOps") < names.index("MakePackedAPI")
    lowered = stages[2 + names.index("LowerTileOps")]
    assert lowered["flag"] == "changed"
    assert any(r["t"] == "del" and "T.gemm" in r["s"] for r in lowered["rows"])
    assert not any(r["t"] != "del" and "T.gemm" in r["s"] for r in lowered["rows"])
    page = viewer.emit_html(name, stages)
    assert "Pass browser" in page and "gemm_relu" in page
    hostile = viewer.emit_html("x", [{"name": "s", "flag": "source", "rows": [{"t": "equal", "s": "</script><b>"}]}])
    assert hostile.count("</script>") == 1 and "\\u003c/script\\u003e" in hostile
    txt = viewer.emit_txt(name, stages)
    assert txt.startswith("########## kernel: gemm_relu") and "[01] BindTarget" in txt
    out = tmp_path / "b.html"
    assert viewer.main([EXAMPLE, "--target", '{"kind": "cuda", "arch": "sm_80"}', "--out", str(out),
                        *[f"--set={k}={v}" for k, v in SIZES.items()]]) == 0
    assert out.stat().st_size > 10_000 and (tmp_path / "b.txt").exists()


def test_non_cuda_targets_are_refused():
    with pytest.raises(ValueError, match="currently supports only CUDA targets"):
        viewer.build_pass_data(EXAMPLE, None, "c", SIZES, "")
