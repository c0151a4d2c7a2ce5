"""Templates (their equivalent PrimFuncs and hints) and the GEMM analysis behind the tensor-core policy."""

from __future__ import annotations

import pytest
from tvm import te

from tilelang import carver
from tilelang.carver import analysis, matmul_analysis
from tilelang.carver.arch import CUDA, get_arch
from tilelang.carver.roller import Hint
from tilelang.carver.roller.node import OutputNode


@pytest.fixture(autouse=True)
def _no_live_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture(scope="module")
def a100() -> CUDA:
    return CUDA({"kind": "cuda", "arch": "sm_80"})


def _params(func) -> list[tuple[str, tuple[int, ...], str]]:
    return [(b.name, tuple(int(d) for d in b.shape), str(b.dtype)) for b in analysis.func_buffers(func)]


def test_matmul_template_function_and_hints(a100: CUDA) -> None:
    t = carver.MatmulTemplate(M=256, N=128, K=64, in_dtype="float16", out_dtype="float16", accum_dtype="float32",
                              with_bias=True)
    assert _params(t.equivalent_function()) == [("A", (256, 64), "float16"), ("B", (128, 64), "float16"),
                                                ("Bias", (128,), "float32"), ("D", (256, 128), "float16")]
    hints = t.with_arch(a100).recommend_hints(topk=3)
    assert hints and all(isinstance(h, Hint) for h in hints)
    assert "M=256" in repr(t) and t.params_as_dict()["with_bias"] is True
    t2 = carver.MatmulTemplate(M=64, N=32, K=16, trans_A=True, trans_B=False)
    assert _params(t2.equivalent_function())[:2] == [("A", (16, 64), "float16"), ("B", (16, 32), "float16")]


@pytest.mark.parametrize("bad", [{"M": 0, "N": 4, "K": 4}, {"M": 4, "N": None, "K": 4}, {"M": 4, "N": 4, "K": 2.5}])
def test_matmul_template_rejects_bad_sizes(bad: dict) -> None:
    with pytest.raises(ValueError, match="must be a positive int"):
        carver.MatmulTemplate(**bad)


def test_gemv_elementwise_and_reduction_templates(a100: CUDA) -> None:
    gemv = carver.GEMVTemplate(N=512, K=256).with_arch(a100)
    assert _params(gemv.equivalent_function())[0] == ("A", (1, 256), "float16")
    assert gemv.recommend_hints(topk=2)
    elem = carver.ElementwiseTemplate(shape=[64, 32], dtype="float32").with_arch(a100)
    hints = elem.recommend_hints(topk=4)
    assert hints and all(h.rstep == [] and len(h.block) == 2 for h in hints)
    red = carver.GeneralReductionTemplate(structure="SRS", shape=[8, 16, 32], dtype="float32").with_arch(a100)
    assert _params(red.equivalent_function())[1] == ("C", (8, 32), "float32")
    hints = red.recommend_hints(topk=2)
    assert hints and all(len(h.block) == 2 and len(h.rstep) == 1 for h in hints)
    with pytest.raises(ValueError, match="only 'S'/'R' allowed"):
        carver.GeneralReductionTemplate(structure="SX", shape=[4, 4])
    with pytest.raises(ValueError, match="length must match"):
        carver.GeneralReductionTemplate(structure="SSR", shape=[4, 4])
    with pytest.raises(ValueError, match="non-empty shape"):
        carver.ElementwiseTemplate(shape=[])


def test_conv_template(a100: CUDA) -> None:
    conv = carver.ConvTemplate(N=2, C=16, H=14, W=14, F=32, K=3, S=2, D=1, P=1)
    assert conv.output_hw == (7, 7)
    assert _params(conv.equivalent_function())[-1] == ("C", (2, 7, 7, 32), "float16")
    assert conv.with_arch(a100).recommend_hints(topk=2)
    assert carver.ConvTemplate(N=1, C=4, H=8, W=8, F=4, K=1, S=1, D=1, P=0).output_hw == (8, 8)
    with pytest.raises(ValueError, match="does not fit"):
        carver.ConvTemplate(N=1, C=4, H=2, W=2, F=4, K=5, S=1, D=1, P=0)


def test_flash_attention_template_plans_both_gemms_together(a100: CUDA) -> None:
    fa = carver.FlashAttentionTemplate(batch_size=1, num_heads=2, seq_length=256, seq_kv_length=256, head_dim=64)
    fa.with_arch(a100)  # switching device rebuilds the tensorized graph
    (out,) = fa.output_nodes
    assert isinstance(out, OutputNode)
    second = out.inputs[0].src_node
    first = second.inputs[0].src_node
    assert (first.name, second.name) == ("MMA0", "MMA1") and second.get_tag("tensorcore_config")
    hints = fa.recommend_hints(topk=2)
    assert hints
    for plan in hints:
        assert set(plan) == {first, second}
        assert plan[first].block[0] == plan[second].block[0]  # one row tile for both products


def test_templates_follow_the_device_they_are_given() -> None:
    cpu, a100 = get_arch("llvm"), CUDA({"kind": "cuda", "arch": "sm_80"})
    t = carver.MatmulTemplate(M=512, N=512, K=512, in_dtype="float16", out_dtype="float16", accum_dtype="float32")
    assert not any(h.use_tc for h in t.with_arch(cpu).recommend_hints(2))
    assert all(h.use_tc for h in t.with_arch(a100).recommend_hints(2))
    assert t.arch is a100 and not t.is_volta_arch() and t.is_ampere_arch() and not t.is_rdna_arch()
    with pytest.raises(TypeError, match="expects a TileDevice"):
        t.with_arch("cuda")


# ------------------------------------------------------------------ GEMM analysis
def _gemm_func(trans_b: bool, batch: int = 0):
    shape_a = ((batch,) if batch else ()) + (64, 32)
    shape_b = ((batch,) if batch else ()) + ((48, 32) if trans_b else (32, 48))
    A = te.placeholder(shape_a, name="A", dtype="float16")
    B = te.placeholder(shape_b, name="B", dtype="float16")
    k = te.reduce_axis((0, 32), name="k")

    def body(*idx):
        *b, i, j = idx
        bv = B[(*b, j, k)] if trans_b else B[(*b, k, j)]
        return te.sum(A[(*b, i, k)].astype("float32") * bv.astype("float32"), axis=k)

    C = te.compute(((batch,) if batch else ()) + (64, 48), body, name="C")
    return te.create_prim_func([A, B, C])


@pytest.mark.parametrize(("trans_b", "batch"), [(True, 0), (False, 0), (True, 4)])
def test_gemm_is_normalised_for_tensor_cores(a100: CUDA, trans_b: bool, batch: int) -> None:
    func = _gemm_func(trans_b, batch)
    sch_block = analysis.normalize_prim_func(__import__("tvm").s_tir.Schedule(func))
    assert [b.dom_kind() for b in sch_block] == ["SSSR" if batch else "SSR"]
    assert sch_block[0].is_gemm() and not sch_block[0].is_gemv()
    tensorized, tags = matmul_analysis.get_tensorized_func_and_tags(func, a100.target)
    assert tags is not None and tags["intrin_info"]["trans_b"] is trans_b
    assert tensorized.attrs["dlight.tensorcore_prenormlized"]
    blocks = analysis.normalize_prim_func(__import__("tvm").s_tir.Schedule(tensorized))
    main = next(b for b in blocks if b.is_reduction())
    # C[S, I, J] += A[S, I, K] * B[S, J, K]; a unit batch axis is dropped by the normaliser
    assert main.dom() == ([batch] if batch else []) + [64, 48, 32]
    assert len(blocks) == 4  # A, B and C staged through reindexed buffers


def test_gemm_analysis_declines_what_matrix_units_cannot_take(a100: CUDA) -> None:
    func = _gemm_func(True)
    assert matmul_analysis.get_tensorized_func_and_tags(func, get_arch("llvm").target) == (func, None)
    small = carver.MatmulTemplate(M=8, N=64, K=64).equivalent_function()  # M below one 16-row instruction
    assert matmul_analysis.get_tensorized_func_and_tags(small, a100.target)[1] is None
    fp32 = carver.MatmulTemplate(M=64, N=64, K=64, in_dtype="float32", accum_dtype="float32",
                                 out_dtype="float32").equivalent_function()
    assert matmul_analysis.get_tensorized_func_and_tags(fp32, a100.target)[1] is None
    elem = carver.ElementwiseTemplate(shape=[64, 64]).equivalent_function()
    assert matmul_analysis.get_tensorized_func_and_tags(elem, a100.target)[1] is None


def test_detect_iter_traits_and_index_maps() -> None:
    import tvm

    func = _gemm_func(True)
    sch = tvm.s_tir.Schedule(func)
    block = sch.get(sch.get_child_blocks(analysis.get_root_block(sch))[0])
    a, b, c, every = matmul_analysis.detect_iter_traits(block)
    kinds = matmul_analysis.IterKind
    assert [t.kind for t in every] == [kinds.kIter_I, kinds.kIter_J, kinds.kIter_K]
    assert [t.kind for t in a] == [kinds.kIter_I, kinds.kIter_K]
    assert [t.kind for t in b] == [kinds.kIter_J, kinds.kIter_K] and [t.kind for t in c] == [kinds.kIter_I,
                                                                                          kinds.kIter_J]
    block_map, a_map, b_map, c_map = matmul_analysis.get_index_map(block, ["a", "a", "a"])
    assert len(block_map.final_indices) == 4
    # B is [N, K] (K innermost), so the "a" layout keeps it [S, J, K]: point (j=5, k=7) -> (0, 5, 7)
    assert [int(x) for x in b_map.map_indices([5, 7])] == [0, 5, 7]
    assert [int(x) for x in a_map.map_indices([3, 7])] == [0, 3, 7]
    assert [int(x) for x in c_map.map_indices([3, 5])] == [0, 3, 5]
    assert matmul_analysis.get_in_out_dtypes(block) == ("float16", "float32")
    assert matmul_analysis.check_sm_version is __import__("tilelang.carver.arch.cuda",
                                                           fromlist=["x"]).check_sm_version


@pytest.mark.parametrize(("dtype", "matrix", "trans", "shape"), [
    ("float16", "A", False, (16, 16)), ("float16", "B", True, (16, 16)), ("int8", "A", False, (16, 32)),
    ("int8", "B", True, (16, 32)),
])
def test_ldmatrix_maps_are_permutations(dtype: str, matrix: str, trans: bool, shape: tuple[int, int]) -> None:
    index_map, inverse = matmul_analysis.get_propagate_map(trans=trans, dtype=dtype, matrix_name=matrix)
    rows, cols = shape
    images = {tuple(int(x) for x in index_map.map_indices([i, j])) for i in range(rows) for j in range(cols)}
    assert images == {(i, j) for i in range(rows) for j in range(cols)}
    for i, j in ((0, 0), (3, 7), (rows - 1, cols - 1)):
        there = index_map.map_indices([i, j])
        assert [int(x) for x in inverse.map_indices(there)] == [i, j]
    stage3, _ = matmul_analysis.get_ladder_stage3_map(dtype=dtype)
    assert {tuple(int(x) for x in stage3.map_indices([i, j])) for i in range(rows) for j in range(cols)} == images
    with pytest.raises(ValueError, match="Only support"):
        matmul_analysis.get_propagate_map(dtype="float32")


def test_roller_entry_points(a100: CUDA) -> None:
    import tvm

    from tilelang.carver import utils

    func = carver.MatmulTemplate(M=256, N=256, K=256).equivalent_function()
    mod = tvm.IRModule({"main": func})
    assert utils.retrieve_func_from_module(mod).same_as(func)
    assert all(h.use_tc for h in utils.get_roller_hints_from_func(mod, a100, topk=2))
    assert utils.get_roller_hints_from_func(func, get_arch("llvm"), tensorcore_only=True) is None
    assert "rasterization2DColumn(8)" in utils.get_rasterization_code(8)
    with pytest.raises(ValueError, match="Not supported type"):
        utils.get_roller_hints_from_func("main", a100)
