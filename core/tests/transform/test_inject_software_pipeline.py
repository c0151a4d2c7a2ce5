"""InjectSoftwarePipeline: prologue / steady state / epilogue over multi-buffered shared tiles, or a serial loop."""

import pytest
import tvm
from transform_helpers import as_module, body_equal

import tilelang.language as T
from tilelang.transform import InjectSoftwarePipeline
from tilelang.transform import _common as C

ON = {"software_pipeline": True}


def _run(func, target=None):
    return InjectSoftwarePipeline(target or {"kind": "cuda"})(as_module(func))


def accumulate(n=4, **pipelined):
    @T.prim_func
    def before(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(n, **pipelined):
                T.copy(A[k * 32:k * 32 + 32], S)
                for i in T.Parallel(32):
                    F[i] += S[i]
            T.copy(F, B[0])

    return before


def test_two_stages_double_buffer_the_copy(options):
    options(ON)

    @T.prim_func
    def expected(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((2, 32), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            T.copy(A[0:32], S[0, 0:32])                                   # prologue: iteration 0's copy
            for k in T.serial(3):                                         # steady: copy k + 1, compute k
                T.copy(A[k * 32 + 32:k * 32 + 64], S[(k + 1) % 2, 0:32])
                for i in T.Parallel(32):
                    F[i] += S[k % 2, i]
            for i in T.Parallel(32):                                      # epilogue: compute 3
                F[i] += S[1, i]
            T.copy(F, B[0])

    assert body_equal(_run(accumulate(num_stages=2)), expected)


def test_order_and_stage_annotations(options):
    options(ON)

    @T.prim_func
    def expected(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((2, 32), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            T.copy(A[0:32], S[0, 0:32])
            for k in T.serial(3):                                         # order=[1, 0]: compute first
                for i in T.Parallel(32):
                    F[i] += S[k % 2, i]
                T.copy(A[k * 32 + 32:k * 32 + 64], S[(k + 1) % 2, 0:32])
            for i in T.Parallel(32):
                F[i] += S[1, i]
            T.copy(F, B[0])

    assert body_equal(_run(accumulate(num_stages=2, order=[1, 0], stage=[0, 1])), expected)


def test_three_stages_and_a_short_loop(options):
    options(ON)
    body = _run(accumulate(n=2, num_stages=3))["main"].body
    shared = [a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) == "shared.dyn"]
    assert [int(s) for s in shared[0].ty.shape] == [3, 32]
    assert not C.collect(body, tvm.tirx.IfThenElse)   # a constant trip count needs no guards
    # prologue issues copies 0 and 1, no steady loop (2 - 2 = 0 iterations), the epilogue computes 0 and 1
    assert len([lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]) == 0


def test_dynamic_trip_count_is_guarded(options):
    options(ON)
    n = T.dynamic("n")

    @T.prim_func
    def before(A: T.Tensor((n, 32), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(n, num_stages=3):
                T.copy(A[k, 0:32], S)
                for i in T.Parallel(32):
                    F[i] += S[i]
            T.copy(F, B[0])

    body = _run(before)["main"].body
    ifs = C.collect(body, tvm.tirx.IfThenElse)
    assert len(ifs) == 4  # prologue: 2 copies; epilogue: 2 computes
    assert all("n" in str(s.condition) for s in ifs)


@pytest.mark.parametrize("opts,kw", [({}, {"num_stages": 3}), (ON, {"num_stages": 1})])
def test_serial_when_not_asked_or_one_stage(options, opts, kw):
    options(opts)
    body = _run(accumulate(**kw))["main"].body
    loops = [lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]
    assert len(loops) == 1 and not loops[0].annotations
    assert all(len(a.buffer.ty.shape) == 1 for a in C.allocations(body))


def test_serial_when_the_tile_is_used_after_the_loop(options):
    options(ON)

    @T.prim_func
    def before(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[k * 32:k * 32 + 32], S)
                for i in T.Parallel(32):
                    F[i] += S[i]
            T.copy(S, B[0])

    body = _run(before)["main"].body
    assert len(C.collect(body, tvm.tirx.For)) == 2  # the serial loop and its parallel nest


def test_config_disables_pipelining(options):
    from tilelang.transform.config import tl_configs

    options(ON)
    with tl_configs({"tl.disable_software_pipeline": True}):
        body = _run(accumulate(num_stages=2))["main"].body
    assert all(len(a.buffer.ty.shape) == 1 for a in C.allocations(body))


def test_wrong_annotation_length_is_an_error(options):
    options(ON)
    with pytest.raises(Exception, match=r"stage=\[0, 1, 1\] has 3 entries, the loop body has 2 statements"):
        _run(accumulate(num_stages=2, stage=[0, 1, 1]))
