"""InjectSoftwarePipeline: prologue / steady state / epilogue over multi-buffered shared tiles, or a serial loop."""

import pytest
import tvm
from transform_helpers import as_module, body_equal

import tilelang.language as T
from tilelang.transform import InjectSoftwarePipeline
from tilelang.transform import utils as C

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


# ----------------------------------------------------------------- declarations at the top of the loop body
def scratch(n=4, **pipelined):
    """A body with a top-level ``Bind`` (no memory read) and a scratch tile allocated between its statements
    (what backend passes leave in flash attention's loop)."""

    @T.prim_func
    def before(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(n, **pipelined):
                base = k * 32
                T.copy(A[base:base + 32], S)
                W = T.alloc_shared((32,), "float32")
                for i in T.Parallel(32):
                    W[31 - i] = S[i]
                for i in T.Parallel(32):
                    F[i] += W[i]
            T.copy(F, B[0])

    return before


def _scratch_allocs(node):
    return [a for a in C.allocations(node) if str(a.buffer.name) == "W"]


def test_top_level_scratch_and_bind_are_pipelined(options):
    options(ON)

    @T.prim_func
    def expected(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((2, 32), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            T.copy(A[0:32], S[0, 0:32])
            for k in T.serial(3):
                T.copy(A[k * 32 + 32:k * 32 + 64], S[(k + 1) % 2, 0:32])
                W = T.alloc_shared((32,), "float32")                      # declared again in each slot
                for i in T.Parallel(32):
                    W[31 - i] = S[k % 2, i]
                for i in T.Parallel(32):
                    F[i] += W[i]
            W1 = T.alloc_shared((32,), "float32")
            for i in T.Parallel(32):
                W1[31 - i] = S[1, i]
            for i in T.Parallel(32):
                F[i] += W1[i]
            T.copy(F, B[0])

    out = _run(scratch(num_stages=2))
    assert body_equal(out, expected)
    body = out["main"].body
    steady = [lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]
    assert len(steady) == 1 and len(_scratch_allocs(steady[0].body)) == 1  # one iteration's lifetime
    assert len({a.buffer for a in _scratch_allocs(body)}) == 2               # steady slot + epilogue slot
    assert not C.collect(body, tvm.tirx.Bind)                                 # inlined


def test_scratch_in_a_dynamic_epilogue_is_declared_outside_its_guard(options):
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
                W = T.alloc_shared((32,), "float32")
                for i in T.Parallel(32):
                    W[i] = S[i]
                for i in T.Parallel(32):
                    F[i] += W[i]
            T.copy(F, B[0])

    body = _run(before)["main"].body
    guards = C.collect(body, tvm.tirx.IfThenElse)
    assert len(guards) == 2 + 2 * 2  # prologue: 2 copies; epilogue: 2 slots x 2 computes
    assert all(not _scratch_allocs(g) for g in guards)  # each W is declared before (outside) its guarded users
    assert len({a.buffer for a in _scratch_allocs(body)}) == 3


def test_scratch_used_at_two_stages_stays_serial(options):
    options(ON)

    @T.prim_func
    def before(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(4, num_stages=2):
                W = T.alloc_shared((32,), "float32")
                T.copy(A[k * 32:k * 32 + 32], W)   # a producer (stage 0) writing the scratch tile ...
                for i in T.Parallel(32):
                    F[i] += W[i]                   # ... that a stage-1 statement reads: it would carry values
            T.copy(F, B[0])

    body = _run(before)["main"].body
    loops = [lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]
    assert len(loops) == 1 and not loops[0].annotations
    assert [int(d) for d in _scratch_allocs(body)[0].buffer.ty.shape] == [32]


def test_bind_reading_memory_stays_serial(options):
    options(ON)

    @T.prim_func
    def before(A: T.Tensor((128,), "float32"), B: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((32,), "float32")
            F = T.alloc_fragment((32,), "float32")
            T.clear(F)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[k * 32:k * 32 + 32], S)
                first = F[0]                        # read here, before the statement below updates F
                for i in T.Parallel(32):
                    F[i] += S[i] + first
            T.copy(F, B[0])

    body = _run(before)["main"].body
    loops = [lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]
    assert len(loops) == 1 and not loops[0].annotations
    assert all(len(a.buffer.ty.shape) == 1 for a in C.allocations(body))


def test_annotations_for_a_body_split_by_backend_passes_fall_back_to_serial(options):
    # stage/order count the user's statements; once a pass has split them (and declared scratch between them)
    # the annotation no longer lines up: run serially rather than reject the user's program
    options(ON)
    body = _run(scratch(num_stages=2, stage=[0, 1], order=[0, 1]))["main"].body
    loops = [lp for lp in C.collect(body, tvm.tirx.For) if C.PARALLEL_ANN not in lp.annotations]
    assert len(loops) == 1 and not loops[0].annotations


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("num_stages", [2, 3])
def test_top_level_scratch_pipelined_matches_the_serial_loop_on_cpu(monkeypatch, num_stages):
    import torch

    import tilelang

    real = C.pipeline_options
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    monkeypatch.setattr(C, "pipeline_options", lambda target: {**real(target), "software_pipeline": True})
    func = scratch(n=4, num_stages=num_stages)
    body = _run(func, {"kind": "llvm"})["main"].body
    assert len({a.buffer for a in _scratch_allocs(body)}) > 1  # really pipelined (one W per slot)
    art = tilelang.lower(func, target="cpu")
    a = torch.randn(128)
    b = torch.zeros(32)
    art.rt_mod[art.name](a, b)
    torch.testing.assert_close(b, a.view(4, 32).flip(1).sum(0))


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("pipelined", [False, True], ids=["cpu_options", "forced"])
@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
def test_flash_attention_two_stages_matches_sdpa_on_cpu(monkeypatch, pipelined, is_causal):
    # the CPU target does not ask for pipelining (the loop runs serially); forced on, core expands it (K and V
    # double-buffered) and the result must not change
    import torch

    import tilelang
    from tilelang.testing import corpus

    if pipelined:
        real = C.pipeline_options
        monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
        monkeypatch.setattr(C, "pipeline_options", lambda target: {**real(target), "software_pipeline": True})
    ck = corpus.flash_attention(batch=1, heads=2, seq_len=192, dim=32, is_causal=is_causal, num_stages=2)
    body = _run(ck.func, {"kind": "llvm"})["main"].body
    doubled = sorted(str(a.buffer.name) for a in C.allocations(body) if len(a.buffer.ty.shape) == 3)
    assert doubled == (["K_shared", "V_shared"] if pipelined else [])
    art = tilelang.lower(ck.func, target="cpu")
    inputs, outs = ck.make_inputs(), ck.make_outputs()
    art.rt_mod[art.name](*ck.call_args(inputs, outs))
    q, k, v = (x.float().transpose(1, 2) for x in inputs)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=is_causal).transpose(1, 2)
    torch.testing.assert_close(outs[0].float(), ref, atol=2e-2, rtol=2e-2)
