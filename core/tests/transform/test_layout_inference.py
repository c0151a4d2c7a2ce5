import engine_kernels as K
import tvm
from transform_helpers import as_module

from tilelang.transform import LayoutInference
from tilelang.transform import utils as C


def kinds(mod):
    return {str(a.buffer.name): str(a.annotations[C.FRAGMENT_ANN]) for a in C.allocations(mod["main"].body)
            if C.scope_of(a.buffer) == "local.fragment"}


def test_flash_attention_tiles_partitioned_row_vectors_replicated(options):
    options({"has_threads": True})
    got = kinds(LayoutInference({"kind": "cuda"})(as_module(K.flash_attention())))
    assert got["acc_s"] == got["acc_o"] == got["acc_s_cast"] == "partitioned"
    for row in ("scores_max", "scores_max_prev", "scores_scale", "scores_sum", "logsum"):
        assert got[row] == "replicated", row  # read as m[i] inside Parallel(M, N)


def test_gemm_accumulator_partitioned(options):
    options({"has_threads": True})
    assert kinds(LayoutInference({"kind": "cuda"})(as_module(K.gemm()))) == {"C_local": "partitioned"}


def test_no_threads_means_whole_tiles(options):
    options({"has_threads": False})
    got = kinds(LayoutInference({"kind": "llvm"})(as_module(K.flash_attention())))
    assert set(got.values()) == {"replicated"}


def test_layout_annotations_are_consumed():
    import tilelang.language as T
    from tilelang.layout import make_swizzled_layout

    @T.prim_func
    def swizzled(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=32):
            Sh = T.alloc_shared((64, 64), "float16")
            T.annotate_layout({Sh: make_swizzled_layout(Sh)})
            T.use_swizzle(8)
            T.copy(A, Sh)

    after = LayoutInference({"kind": "cuda"})(as_module(swizzled))
    keys = {str(s.attr_key) for s in C.collect(after["main"].body, tvm.tirx.AttrStmt)}
    assert not keys & {"tl.layout_map", "tl.swizzle"}


def test_vector_lanes_recorded_for_partitioned_fragments(options):
    options({"has_threads": True, "fragment_vector_lanes": 4})
    after = LayoutInference({"kind": "cuda"})(as_module(K.flash_attention()))
    anns = {str(a.buffer.name): dict(a.annotations) for a in C.allocations(after["main"].body)
            if C.scope_of(a.buffer) == "local.fragment"}
    for tile in ("acc_s", "acc_o", "acc_s_cast"):  # partitioned, innermost extent a multiple of 4
        assert str(anns[tile][C.FRAGMENT_ANN]) == "partitioned" and int(anns[tile]["tl.vector_lanes"]) == 4
    for row in ("scores_max", "scores_sum", "logsum"):  # replicated: no vector layout
        assert str(anns[row][C.FRAGMENT_ANN]) == "replicated" and "tl.vector_lanes" not in anns[row]


def test_vector_lanes_off_by_default(options):
    options({"has_threads": True})
    after = LayoutInference({"kind": "cuda"})(as_module(K.flash_attention()))
    for a in C.allocations(after["main"].body):
        if C.scope_of(a.buffer) == "local.fragment":
            assert set(a.annotations) == {C.FRAGMENT_ANN}
