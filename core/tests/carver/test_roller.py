"""The roller: helpers, hints, shape inference and the two policies on device models from the table."""

from __future__ import annotations

import math

import pytest
from tvm import te

from tilelang.carver.arch import CUDA, get_arch
from tilelang.carver.roller import DefaultPolicy, OutputNode, PrimFuncNode, TensorCorePolicy
from tilelang.carver.roller.bestfit import BestFit
from tilelang.carver.roller.hint import Hint, IntrinInfo, Stride
from tilelang.carver.roller.policy.common import (
    coalesced_factor,
    coalesced_tensor_shape,
    factorize,
    get_all_factors,
)
from tilelang.carver.roller.rasterization import NoRasterization, Rasterization2DColumn, Rasterization2DRow


@pytest.fixture(autouse=True)
def _no_live_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def _gemm(M: int, N: int, K: int, dtype: str = "float16", accum: str = "float32", trans_b: bool = False):
    A = te.placeholder((M, K), name="A", dtype=dtype)
    B = te.placeholder((N, K) if trans_b else (K, N), name="B", dtype=dtype)
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(
        A[i, k].astype(accum) * (B[j, k] if trans_b else B[k, j]).astype(accum), axis=k), name="C")
    return te.create_prim_func([A, B, C])


# ------------------------------------------------------------------ helpers
def test_factor_helpers() -> None:
    for n in (1, 12, 16, 97, 1024, 1000):
        assert get_all_factors(n) == [d for d in range(1, n + 1) if n % d == 0]
    assert factorize(360) == [2, 2, 2, 3, 3, 5] and factorize(1) == [] and factorize(97) == [97]


def test_coalescing_estimates() -> None:
    assert coalesced_factor([4, 64], [128, 64]) == 256  # full rows are contiguous across the row boundary
    assert coalesced_factor([4, 32], [128, 64]) == 32
    assert coalesced_tensor_shape([4, 32], [128, 64], 64) == 64 * 128 / 32
    assert coalesced_tensor_shape([0, 32], [128, 64], 64) == 0


def test_bestfit_reuses_freed_space_and_tracks_the_peak() -> None:
    arena = BestFit(align=32)
    a, b = arena.malloc(100), arena.malloc(64)
    assert (a.start, a.size(), b.start) == (0, 128, 128) and arena.limit == 192
    arena.free(a)
    c = arena.malloc(40)  # best fit: the freed 128-byte span, split
    assert c.start == 0 and c.size() == 64 and arena.limit == 192
    arena.free(b)
    arena.free(c)
    assert len(arena.list) == 1 and arena.list[0].is_free
    with pytest.raises(ValueError, match="already free"):
        arena.free(arena.list[0])


def test_stride_and_intrin_info() -> None:
    s = Stride(stride=72, ax=0)
    assert s.compute_strides_from_shape([64, 64]) == [72, 1] and s.compute_elements_from_shape([64, 64]) == 64 * 72
    assert Stride().compute_elements_from_shape([3, 5]) == 15 and not Stride().is_valid()
    with pytest.raises(ValueError, match="smaller than the rows"):
        Stride(stride=8, ax=0).compute_elements_from_shape([4, 16])
    info = IntrinInfo("int8", "int32", trans_b=True, input_transform_kind=1, weight_transform_kind=2)
    assert info.is_input_8bit() and info.inter_transform_a and not info.smooth_a and info.smooth_b
    assert "weight_transform_kind=2" in repr(info)


def test_hint_dict_round_trip() -> None:
    hint = Hint.from_dict({"block": [64, 128], "warp": [32, 64], "rstep": [32], "use_tc": True,
                           "pipeline_stage": 2})
    assert hint.to_dict() == {"block": [64, 128], "warp": [32, 64], "rstep": [32], "use_tc": True,
                              "pipeline_stage": 2}
    assert hint.step == [1, 1] and hint.raxis_order == [0]
    hint.warp, hint.block = [1, 32, 64], [1, 64, 128]
    assert hint.tensorcore_legalization().block == [64, 128]
    hint.intrin_info = IntrinInfo("float16", "float32", True)
    assert hint.complete_config(None).pass_context == {"tirx.merge_static_smem": True}


def test_rasterization_plans() -> None:
    assert NoRasterization().get_code() == []
    function, call = Rasterization2DColumn(8).get_code()
    assert "rasterization2DColumn(const int panel_width)" in function and call.strip().endswith("(8);")
    assert "dim3(a, b, blockIdx.z)" in function
    assert "dim3(b, a, blockIdx.z)" in Rasterization2DRow(4).get_code()[0]
    assert Rasterization2DColumn(3).panel_width == 3
    with pytest.raises(ValueError, match="no panel width"):
        _ = NoRasterization().panel_width


# ------------------------------------------------------------------ nodes and shape inference
def test_prim_func_node_propagates_tiles() -> None:
    node = PrimFuncNode(_gemm(256, 128, 512), name="gemm")
    assert node.get_space_dim() == [256, 128] and len(node.raxis) == 1 and int(node.raxis[0].dom.extent) == 512
    k = node.raxis[0].var.name  # steps are keyed by the normalised reduction iterator's name
    assert node.propagate_inputs([64, 32], {k: 16}) == [[64, 16], [16, 32]]
    assert node.propagate_inputs([64, 32]) == [[64, 512], [512, 32]]  # no step: the whole reduction
    assert node.propagate_inputs([1024, 32], {k: 16})[0] == [256, 16]  # clipped to the buffer
    assert node.propagate_outputs([64, 32]) == [[64, 32]]
    smem, cached = node.footprint([64, 32], {k: 16})
    assert cached == ["A", "B"] and smem == (64 * 16 + 16 * 32) * 2


def test_shape_inference_through_an_elementwise_producer() -> None:
    A = te.placeholder((128, 64), name="A", dtype="float32")
    scaled = te.compute((128, 64), lambda i, j: A[i, j] * 2, name="scaled")
    k = te.reduce_axis((0, 64), name="k")
    rowsum = te.compute((128,), lambda i: te.sum(scaled[i, k], axis=k), name="rowsum")
    node = PrimFuncNode(te.create_prim_func([A, rowsum]))
    assert node.get_space_dim() == [128]
    assert node.propagate_inputs([8], {node.raxis[0].var.name: 16}) == [[8, 16]]
    assert node.propagate_inputs([8]) == [[8, 64]]


def test_output_node_and_graph_order() -> None:
    node = PrimFuncNode(_gemm(64, 64, 64))
    out = OutputNode(node)
    assert out.is_output() and out.get_shape() == [64, 64] and str(out.get_dtype()) == "float32"
    policy = DefaultPolicy.from_output_nodes([out], get_arch("llvm"))
    assert policy.ordered_nodes == [node] and policy.output_nodes == [node]


# ------------------------------------------------------------------ policies
def _check_simt_hint(hint: Hint, arch, dims: list[int], K: int) -> None:
    assert len(hint.block) == len(dims) and all(d % b == 0 or b <= d for b, d in zip(hint.block, dims))
    threads = math.prod(hint.thread) * math.prod(hint.reduce_thread or [1])
    assert 1 <= threads <= 1024
    assert all(b % t == 0 for b, t in zip(hint.block, hint.thread))
    assert K % hint.rstep[0] == 0
    assert hint.arch is arch


def test_default_policy_on_the_cpu_respects_its_caches() -> None:
    cpu = get_arch("llvm")
    func = _gemm(1024, 1024, 1024, dtype="float32", accum="float32")
    policy = DefaultPolicy.from_prim_func(func, cpu)
    hints = policy.emit_config(5)
    assert len(hints) == 5
    node = policy.prim_func_node
    for hint in hints:
        _check_simt_hint(hint, cpu, [1024, 1024], 1024)
        smem, _ = node.footprint(hint.block, {node.raxis[0].var.name: hint.rstep[0]})
        assert smem <= cpu.smem_cap  # packed operand tiles stay within half the per-core L2
        assert 2 * math.prod(hint.block) <= cpu.reg_cap  # the accumulator tile within its share of L2
    assert len({tuple(h.block) for h in hints}) == len(hints)


def test_default_policy_on_a_gpu_model() -> None:
    a100 = CUDA({"kind": "cuda", "arch": "sm_80"})
    # fp16 x fp16 -> fp16 accumulation on a float32-only path keeps it on CUDA cores: use an int16 GEMM
    hints = DefaultPolicy.from_prim_func(_gemm(512, 512, 512, dtype="int16", accum="int32"), a100).emit_config(4)
    assert hints
    for hint in hints:
        _check_simt_hint(hint, a100, [512, 512], 512)
        assert not hint.use_tc and hint.rasterization_plan.get_code() == []


def test_tensorcore_policy_on_sm80() -> None:
    from tilelang.carver.matmul_analysis import get_tensorized_func_and_tags

    a100 = CUDA({"kind": "cuda", "arch": "sm_80"})
    func, tags = get_tensorized_func_and_tags(_gemm(4096, 4096, 4096, trans_b=True), a100.target)
    assert tags["tensorcore_config"] == [1, 2] and tags["pipeline_stage"] == 2 and tags["use_async_copy"]
    assert tags["intrin_info"] == {"in_dtype": "float16", "out_dtype": "float32", "trans_b": True}
    hints = TensorCorePolicy.from_prim_func(func, a100, tags=tags).emit_config(6)
    assert len(hints) == 6
    for hint in hints:
        assert hint.use_tc and hint.pipeline_stage == 2 and hint.use_async and hint.shared_scope == "shared.dyn"
        bm, bn = hint.block
        wm, wn = hint.warp
        assert bm % wm == 0 and bn % wn == 0 and wm % 16 == 0 and wn % 16 == 0
        assert (bm // wm) * (bn // wn) * 32 <= 1024
        assert hint.rstep[0] % 16 == 0 and 4096 % hint.rstep[0] == 0
        assert isinstance(hint.rasterization_plan, Rasterization2DColumn)  # 64 MiB of inputs > the 40 MiB L2
        assert hint.rasterization_plan.panel_width == int(108 ** 0.5)
        assert hint.intrin_info.out_dtype == "float32"


def test_tensorcore_policy_on_rdna_prefers_four_warps() -> None:
    from tilelang.carver.matmul_analysis import get_tensorized_func_and_tags

    strix = get_arch({"kind": "hip", "mcpu": "gfx1151"})
    func, tags = get_tensorized_func_and_tags(_gemm(2048, 2048, 2048, trans_b=True), strix.target)
    assert tags is not None and tags["pipeline_stage"] == 2 and not tags["use_async_copy"]
    policy = TensorCorePolicy.from_prim_func(func, strix, tags=tags)
    hints = policy.emit_config(4)
    assert hints and all(h.pipeline_stage == 2 for h in hints)
    assert policy.score_block_size(128)[:2] == (0, 0) and policy.score_block_size(256)[0] == 1
    warps = [(h.block[0] // h.warp[0]) * (h.block[1] // h.warp[1]) for h in hints]
    assert warps[0] == 4


def test_symbolic_dims_are_planned_at_their_opt_shapes() -> None:
    m = te.var("m")
    A = te.placeholder((m, 64), name="A", dtype="float32")
    B = te.placeholder((64, 32), name="B", dtype="float32")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((m, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    policy = DefaultPolicy.from_prim_func(te.create_prim_func([A, B, C]), get_arch("llvm"),
                                          tags={"opt_shapes": {"m": 256}})
    assert policy.prim_func_node.get_space_dim() == [256, 32]
    hints = policy.emit_config(3)
    assert hints and all(256 % h.block[0] == 0 and h.opt_shapes == {"m": 256} for h in hints)
