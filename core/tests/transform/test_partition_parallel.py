import engine_kernels as K
import tvm
from transform_helpers import as_module, body_equal
from tvm.script import tirx as S

import tilelang.language as T
from tilelang.transform import LayoutInference, LowerTileOps, PartitionParallel
from tilelang.transform import utils as C


def lower(func, target):
    mod = as_module(func)
    for factory in (LayoutInference, LowerTileOps, PartitionParallel):
        mod = factory(target)(mod)
    return mod


def test_cyclic_partition_over_threads(options):
    options({"has_threads": True})

    @T.prim_func
    def before(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=4):
            F = T.alloc_fragment((8,), "float32")
            for i in T.Parallel(8):
                F[i] = A[i]
            for i in T.Parallel(8):
                A[i] = F[i] + 1.0

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 4)
        F_local = S.alloc_buffer((2,), scope="local", annotations={"tl.fragment": "partitioned"})
        for k in range(2):
            F_local[k] = A[k * 4 + tx]
        for k in range(2):
            A[k * 4 + tx] = F_local[k] + S.float32(1.0)

    assert body_equal(lower(before, {"kind": "cuda"}), expected)


def test_non_dividing_extent_is_guarded(options):
    options({"has_threads": True})

    @T.prim_func
    def before(A: T.Tensor((10,), "float32")):
        with T.Kernel(1, threads=4):
            for i in T.Parallel(10):
                A[i] = 0.0

    body = lower(before, {"kind": "cuda"})["main"].body
    loops = C.collect(body, tvm.tirx.For)
    assert [int(lp.extent) for lp in loops] == [3]
    assert len(C.collect(body, tvm.tirx.IfThenElse)) == 1


def test_nothing_tile_level_remains(options):
    options({"has_threads": True})
    body = lower(K.flash_attention(), {"kind": "cuda"})["main"].body
    assert not [lp for lp in C.collect(body, tvm.tirx.For) if C.is_parallel(lp)]
    assert not [a for a in C.allocations(body) if C.scope_of(a.buffer) == "local.fragment"]
    sizes = {str(a.buffer.name): int(a.buffer.ty.shape[0]) for a in C.allocations(body)}
    assert sizes["acc_o_local"] == 32 * 32 // 128  # partitioned: registers per thread
    assert sizes["scores_max"] == 32  # replicated row vector: whole per thread


def test_single_thread_targets_run_nests_whole_and_vectorise(options):
    options({"has_threads": False, "vectorize": True})
    body = lower(K.elementwise_add(), {"kind": "llvm"})["main"].body
    kinds = [lp.kind for lp in C.collect(body, tvm.tirx.For)]
    assert tvm.tirx.ForKind.VECTORIZED in kinds and tvm.tirx.ForKind.PARALLEL not in kinds


def test_vector_partition_over_threads(options):
    options({"has_threads": True, "fragment_vector_lanes": 4})

    @T.prim_func
    def before(A: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=4):
            F = T.alloc_fragment((32,), "float32")
            for i in T.Parallel(32):
                F[i] = A[i]
            for i in T.Parallel(32):
                A[i] = F[i] + 1.0

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((32,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 4)
        F_local = S.alloc_buffer((8,), scope="local", annotations={"tl.fragment": "partitioned",
                                                                     "tl.vector_lanes": 4})
        for k in range(2):
            for v in S.vectorized(4):
                F_local[k * 4 + v] = A[k * 16 + tx * 4 + v]
        for k in range(2):
            for v in S.vectorized(4):
                A[k * 16 + tx * 4 + v] = F_local[k * 4 + v] + S.float32(1.0)

    assert body_equal(lower(before, {"kind": "cuda"}), expected)


def test_vector_partition_falls_back_to_cyclic(options):
    options({"has_threads": True, "fragment_vector_lanes": 4})

    @T.prim_func
    def before(A: T.Tensor((4, 6), "float32")):
        with T.Kernel(1, threads=2):
            F = T.alloc_fragment((4, 6), "float32")
            for i, j in T.Parallel(4, 6):
                F[i, j] = A[i, j]
            for i, j in T.Parallel(4, 6):
                A[i, j] = F[i, j] + 1.0

    body = lower(before, {"kind": "cuda"})["main"].body
    assert [lp.kind for lp in C.collect(body, tvm.tirx.For)] == [tvm.tirx.ForKind.SERIAL] * 2
    alloc = next(a for a in C.allocations(body) if str(a.buffer.name) == "F_local")
    assert dict(alloc.annotations) == {"tl.fragment": "partitioned"} and int(alloc.buffer.ty.shape[0]) == 12
