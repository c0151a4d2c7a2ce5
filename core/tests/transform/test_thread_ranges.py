"""Warp-role branches: the thread range of a branch on the thread index (`tilelang.transform.thread_range`),
fragments spread over it (LayoutInference, PartitionParallel) and barriers inside it (InsertBarriers)."""

import pytest
import tvm
from transform_helpers import as_module
from tvm import tirx
from tvm.script import tirx as S

from tilelang.transform import InsertBarriers, LayoutInference, PartitionParallel
from tilelang.transform import utils as C
from tilelang.transform.layout_inference import THREAD_RANGE_ANN
from tilelang.transform.thread_range import thread_range

tx = tirx.Var("tx", "int32")
bx = tirx.Var("bx", "int32")
A = tirx.decl_buffer((256,), "int32", name="A")


@pytest.mark.parametrize("conds, expected", [
    ([tx >= 128], (128, 128)),
    ([tirx.floordiv(tx, 32) == 2], (64, 32)),
    # an elif chain: the last branch of `if w == 0 / elif w == 1 and bx == 0 / elif 128 <= tx < 256`
    ([tirx.Not(tirx.floordiv(tx, 32) == 0), tirx.Not(tirx.And(tirx.floordiv(tx, 32) == 1, bx == 0)),
      tirx.And(128 <= tx, tx < 256)], (128, 128)),
    ([tirx.And(tirx.floordiv(tx, 32) == 1, bx == 0)], (32, 32)),  # bx: the same for the whole block
    ([bx < 2], (0, 256)),
    ([], (0, 256)),
    ([tirx.floormod(tx, 2) == 0], None),  # not a contiguous slice
    ([tirx.BufferLoad(A, [tx]) > 0], None),  # reads memory through the thread index
])
def test_thread_range_of_branch_conditions(conds, expected):
    assert thread_range(conds, tx, 256) == expected


def _syncs(mod):
    return [e.value for e in C.collect(mod["main"].body, tirx.Evaluate)
            if isinstance(e.value, tvm.ir.Call) and str(e.value.op.name) == "tirx.tvm_storage_sync"]


def _staged_in_branch(lo: int, hi: int):
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((256,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 256)
        Sh = S.alloc_buffer((256,), scope="shared")
        Sh[tx] = A[tx]
        A[tx] = Sh[255 - tx]
        if lo <= tx and tx < hi:
            Sh[tx] = A[tx]
            A[tx] = Sh[hi - 1 - tx + lo]

    return before


def test_barrier_inside_thread_branch_is_a_named_barrier_of_its_threads(options):
    options({"has_threads": True, "partial_barriers": True, "warp_size": 32})
    syncs = _syncs(InsertBarriers({"kind": "cuda"})(as_module(_staged_in_branch(128, 256))))
    assert [[str(a.value) if isinstance(a, tvm.ir.StringImm) else int(a) for a in s.args] for s in syncs] == [
        ["shared"], ["shared"], ["shared", 3, 128]]


def test_barrier_inside_thread_branch_needs_the_option(options):
    options({"has_threads": True})
    with pytest.raises(Exception, match="Cannot insert syncs inside condition"):
        InsertBarriers({"kind": "cuda"})(as_module(_staged_in_branch(128, 256)))


def test_barrier_inside_part_of_a_warp_is_refused(options):
    options({"has_threads": True, "partial_barriers": True, "warp_size": 32})
    with pytest.raises(Exception, match=r"threads \[0, 16\), not whole warps of 32"):
        InsertBarriers({"kind": "cuda"})(as_module(_staged_in_branch(0, 16)))


def test_a_branch_of_one_thread_needs_no_barrier_inside(options):
    """``if tx == 64:`` (a scheduler thread writing then reading a shared word): one thread's accesses are in
    program order; the barriers outside the branch stay."""
    options({"has_threads": True, "partial_barriers": True, "warp_size": 32})
    syncs = _syncs(InsertBarriers({"kind": "cuda"})(as_module(_staged_in_branch(64, 65))))
    assert [[str(a.value) if isinstance(a, tvm.ir.StringImm) else int(a) for a in s.args] for s in syncs] == [
        ["shared"], ["shared"]]


def _fragment_in_branch(outside: bool):
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=256):
            L = T.alloc_fragment((64, 64), "float32")
            tx = T.get_thread_binding()
            if tx >= 128:
                T.copy(A, L)
                for i, j in T.Parallel(64, 64):
                    L[i, j] = L[i, j] * 2
                T.copy(L, B)
            if outside:
                T.fill(L, 0)
    return k


def _lower_to_parallel(func):
    from tilelang.transform import LowerTileOps

    mod = LayoutInference({"kind": "cuda"})(as_module(func))
    return mod, PartitionParallel({"kind": "cuda"})(LowerTileOps({"kind": "cuda"})(mod))


def test_fragment_used_in_one_branch_is_spread_over_its_threads(options):
    options({"has_threads": True})
    mod, low = _lower_to_parallel(_fragment_in_branch(False))
    (alloc,) = [a for a in C.allocations(mod["main"].body) if C.scope_of(a.buffer) == "local.fragment"]
    assert [int(v) for v in alloc.annotations[THREAD_RANGE_ANN]] == [128, 128]
    # 64 * 64 elements over the branch's 128 threads: 32 registers each, indexed from thread 128
    (local,) = [a.buffer for a in C.allocations(low["main"].body) if str(a.buffer.name) == "L_local"]
    assert [int(s) for s in local.ty.shape] == [32]
    loops = C.collect(low["main"].body, tirx.For)
    assert loops and all(int(lp.extent) == 32 for lp in loops)
    assert "B[k * 2 + tx // 64 - 2, tx % 64] = L_local[k]" in low["main"].script()  # row (k * 128 + tx - 128) // 64


def test_fragment_used_in_and_outside_a_branch_is_replicated(options):
    options({"has_threads": True})
    mod, _ = _lower_to_parallel(_fragment_in_branch(True))
    (alloc,) = [a for a in C.allocations(mod["main"].body) if C.scope_of(a.buffer) == "local.fragment"]
    assert str(alloc.annotations[C.FRAGMENT_ANN]) == "replicated"
    assert THREAD_RANGE_ANN not in alloc.annotations



@pytest.mark.backend("cuda")
def test_two_dimensional_thread_blocks_lower_without_thread_ranges():
    # structural_mutate hands a three-parameter callback its in-place mode as the third argument: taken for a
    # thread range, it broke every CUDA kernel with threads=(x, y) (the gemm_sp example's compress kernel)
    import tilelang
    import tilelang.language as T

    @T.prim_func
    def k(dense: T.Tensor((32, 64), "float16"), out: T.Tensor((32, 64), "float16")):
        with T.Kernel(2, 1, threads=(16, 2)) as (bz, _):
            tm = T.get_thread_binding(0)
            tn = T.get_thread_binding(1)
            dense_local = T.alloc_local([32], "float16")
            T.clear(dense_local)
            T.copy(dense[bz * 16 + tm, tn * 32:(tn + 1) * 32], dense_local)
            for i in T.serial(32):
                out[bz * 16 + tm, tn * 32 + i] = dense_local[i] * T.float16(2)

    source = tilelang.lower(k, target={"kind": "cuda", "arch": "sm_90a"}).kernel_source
    assert "threadIdx.y" in source and "dense_local" in source
