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


def _row_program(n=1024, dtype="float32", threads=128):
    """A one-row tile program in the reference examples' style: ``T.Parallel(1, N)`` nests, a row reduction, a
    broadcast of its (1,) result."""
    import tilelang.language as T

    @T.prim_func
    def main(A: T.Tensor((8, n), dtype), B: T.Tensor((8, n), dtype)):
        with T.Kernel(8, threads=threads) as row:
            a = T.alloc_fragment((1, n), dtype)
            sq = T.alloc_fragment((1, n), "float32")
            inv = T.alloc_fragment((1,), "float32")
            T.copy(A[row:row + 1, :], a)
            for i, j in T.Parallel(1, n):
                sq[i, j] = T.cast(a[i, j], "float32") * T.cast(a[i, j], "float32")
            T.reduce_sum(sq, inv, dim=1)
            for i in T.Parallel(1):
                inv[i] = T.rsqrt(inv[i] / n + 1e-12)
            for i, j in T.Parallel(1, n):
                a[i, j] = T.cast(T.cast(a[i, j], "float32") * inv[i], dtype)
            T.copy(a, B[row:row + 1, :])

    return main


def test_unit_loop_var_indexes_unit_dim_element_for_element(options):
    # ``T.Parallel(1, N)`` indexes the tile's unit dim by its extent-1 loop var: still element-for-element, so the
    # row tiles are spread over the threads instead of each thread holding the whole row
    options({"has_threads": True})
    got = kinds(LayoutInference({"kind": "cuda"})(as_module(_row_program())))
    assert got == {"a": "partitioned", "sq": "partitioned", "inv": "replicated"}


def _lanes(mod):
    return {str(a.buffer.name): int(a.annotations.get("tl.vector_lanes", 1)) for a in C.allocations(mod["main"].body)
            if C.scope_of(a.buffer) == "local.fragment"}


def test_vector_bits_give_tied_fragments_the_narrowest_types_width(options):
    options({"has_threads": True, "fragment_vector_bits": 128})
    # fp16 `a` and fp32 `sq` share a nest: 128 bits of fp16 = 8 lanes for both; `inv` is replicated
    assert _lanes(LayoutInference({"kind": "cuda"})(as_module(_row_program(dtype="float16")))) == {
        "a": 8, "sq": 8, "inv": 1}
    assert _lanes(LayoutInference({"kind": "cuda"})(as_module(_row_program(dtype="float32")))) == {
        "a": 4, "sq": 4, "inv": 1}
    # too few elements for 8 lanes on every thread: halved until they fit (256 elements / 64 threads = 4)
    assert _lanes(LayoutInference({"kind": "cuda"})(as_module(_row_program(n=256, dtype="float16", threads=64)))) \
        == {"a": 4, "sq": 4, "inv": 1}


def test_vector_bits_option_is_checked(options):
    import pytest

    from tilelang.errors import LoweringError

    options({"has_threads": True, "fragment_vector_bits": 96})
    with pytest.raises((LoweringError, RuntimeError), match="fragment_vector_bits"):
        LayoutInference({"kind": "cuda"})(as_module(_row_program()))
    options({"has_threads": True, "fragment_vector_bits": 128, "fragment_vector_lanes": 4})
    with pytest.raises((LoweringError, RuntimeError), match="exclude each other"):
        LayoutInference({"kind": "cuda"})(as_module(_row_program()))


def test_vector_bits_leave_generic_gemm_accumulators_cyclic(options):
    # a T.gemm accumulator no backend pass took over is left to the generic gemm, tuned for the cyclic layout
    options({"has_threads": True, "fragment_vector_bits": 128})
    assert _lanes(LayoutInference({"kind": "cuda"})(as_module(K.gemm()))) == {"C_local": 1}
