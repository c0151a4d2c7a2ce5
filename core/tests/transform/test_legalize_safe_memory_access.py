"""LegalizeSafeMemoryAccess: guards exactly the global accesses the analyzer cannot prove in bounds."""

import pytest
import tvm
from transform_helpers import as_module, body_equal
from tvm.script import tirx as S

from tilelang.testing.corpus import CORPUS
from tilelang.transform import LegalizeSafeMemoryAccess
from tilelang.transform import utils as C


def _guard(func):
    return LegalizeSafeMemoryAccess(None)(as_module(func))


def test_edge_block_store_and_loads_are_guarded():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((100, 90), "float32"), B: S.Buffer((90,), "float32"), C: S.Buffer((100, 90), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        S.launch_thread("threadIdx.x", 1)
        for i, j in S.grid(64, 90):
            C[bx * 64 + i, j] = A[bx * 64 + i, j] * B[j]
        for i in range(64):
            B[i] = A[bx * 64 + i, 0]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((100, 90), "float32"), B: S.Buffer((90,), "float32"), C: S.Buffer((100, 90), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        S.launch_thread("threadIdx.x", 1)
        for i, j in S.grid(64, 90):
            if bx * 64 + i < 100:  # the load of A at the same row needs no second guard; B[j] is proven
                C[bx * 64 + i, j] = A[bx * 64 + i, j] * B[j]
        for i in range(64):
            B[i] = S.if_then_else(bx * 64 + i < 100, A[bx * 64 + i, 0], S.float32(0))

    assert body_equal(_guard(before), expected)


def test_proven_accesses_are_untouched():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 64), "float32"), C: S.Buffer((128, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 64)
        for k in range(64):
            C[bx * 64 + k, tx] = A[bx * 64 + k, tx] + S.float32(1)
        for k in range(64):
            if bx * 64 + k // 2 < 100:  # a user's condition
                C[bx * 64 + k // 2, tx] = S.if_then_else(tx < 32, A[bx * 64 + k // 2, tx], S.float32(0))

    after = _guard(before)
    assert after["main"].same_as(as_module(before)["main"]) or body_equal(after, before)


def test_user_and_enclosing_conditions_prove_safety():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((100, 64), "float32"), C: S.Buffer((100, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 4)
        tx = S.launch_thread("threadIdx.x", 128)
        for k in range(16):
            if bx * 32 + (k * 2 + tx // 64) < 100:
                C[bx * 32 + (k * 2 + tx // 64), tx % 64] = A[bx * 32 + (k * 2 + tx // 64), tx % 64]

    assert body_equal(_guard(before), before)


def test_dynamic_shape_gets_symbolic_guards():
    m = tvm.tirx.Var("m", "int32")

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((m, 16), "float32"), C: S.Buffer((m, 16), "float32")):
        bx = S.launch_thread("blockIdx.x", (m + 31) // 32)
        S.launch_thread("threadIdx.x", 1)
        for i, j in S.grid(32, 16):
            C[bx * 32 + i, j] = A[bx * 32 + i, j]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((m, 16), "float32"), C: S.Buffer((m, 16), "float32")):
        bx = S.launch_thread("blockIdx.x", (m + 31) // 32)
        S.launch_thread("threadIdx.x", 1)
        for i, j in S.grid(32, 16):
            if bx * 32 + i < m:
                C[bx * 32 + i, j] = A[bx * 32 + i, j]

    assert body_equal(_guard(before), expected)


def test_negative_offsets_and_pointer_arguments():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32"), S_: S.Buffer((64,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        S_[tx] = A[tx - 1]
        S.evaluate(S.call_extern("float32", "atomicAdd", S.address_of(S_[tx + 1]), S.float32(1)))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "float32"), S_: S.Buffer((64,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        S_[tx] = S.if_then_else(tx - 1 >= 0, A[tx - 1], S.float32(0))
        if tx + 1 < 64:
            S.evaluate(S.call_extern("float32", "atomicAdd", S.address_of(S_[tx + 1]), S.float32(1)))

    assert body_equal(_guard(before), expected)


def test_disabled_by_pass_config():
    from tilelang.transform.config import tl_configs

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((10,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 1)
        for i in range(16):
            A[i] = S.float32(0)

    with tl_configs({"tl.disable_safe_memory_legalize": True}):
        assert body_equal(_guard(before), before)
    assert not body_equal(_guard(before), before)


def _tile_lowered(func, target):
    from tvm.target import Target

    from tilelang.transform import (
        CheckSemantics,
        InjectSoftwarePipeline,
        LayoutInference,
        LowerTileOps,
        PartitionParallel,
    )

    mod = tvm.tirx.transform.BindTarget(Target(target))(as_module(func))
    for factory in (CheckSemantics, LayoutInference, InjectSoftwarePipeline, LowerTileOps, PartitionParallel):
        mod = factory(Target(target))(mod)
    return mod


@pytest.mark.parametrize("target", [{"kind": "llvm"}, {"kind": "cuda", "arch": "sm_80"}, {"kind": "webgpu"}])
@pytest.mark.parametrize("name", ["quickstart_lazy", "gemm_nn", "elementwise_add", "softmax", "flash_attention",
                                  "cpu_gemm", "dynamic_add"])
def test_divisible_kernels_get_no_guards(name, target):
    """The README GEMM and the corpus with divisible sizes keep their exact code (no speed cost)."""
    if "cpu" in name and target["kind"] != "llvm":
        pytest.skip("CPU form")
    mod = _tile_lowered(CORPUS[name]().func, target)
    after = LegalizeSafeMemoryAccess(None)(mod)
    assert after["main"].same_as(mod["main"])


def test_non_divisible_gemm_is_guarded_only_at_the_edges():
    from tilelang.testing.corpus import gemm

    mod = _tile_lowered(gemm(100, 90, 72).func, {"kind": "cuda", "arch": "sm_80"})
    body = LegalizeSafeMemoryAccess(None)(mod)["main"].body
    guarded = [s for s in C.collect(body, tvm.tirx.IfThenElse)
               if C.collect(s.then_case, tvm.tirx.BufferStore) and "C" in
               {str(st.buffer.name) for st in C.collect(s.then_case, tvm.tirx.BufferStore)}]
    assert guarded  # the epilogue store of C is guarded (the copies guard themselves)


def _vector_copy_plus_one(cols):
    @S.prim_func(check_well_formed=False)
    def func(A: S.Buffer((2, cols), "float32"), B: S.Buffer((2, cols), "float32")):
        for i, j in S.grid(2, 8):
            B[i, S.Ramp(j * 4, 1, 4)] = A[i, S.Ramp(j * 4, 1, 4)] + S.Broadcast(S.float32(1), 4)

    return func


def test_vector_indices_are_checked_lane_wise():
    """A 4-lane index into a global buffer (used to crash building an ``int32x4`` cast of the extent)."""
    assert body_equal(_guard(_vector_copy_plus_one(32)), _vector_copy_plus_one(32))  # every lane proven
    body = _guard(_vector_copy_plus_one(30))["main"].body
    (edge,) = [s for s in C.collect(body, tvm.tirx.IfThenElse) if s.else_case is not None]
    assert str(edge.condition) == "j * 4 + 3 < 30"  # first lane proven >= 0, last lane checked
    fast = edge.then_case
    assert isinstance(fast, tvm.tirx.BufferStore) and int(tvm.DataType(str(fast.indices[1].ty.dtype)).lanes) == 4
    lane_stores = C.collect(edge.else_case, tvm.tirx.BufferStore)
    assert len(lane_stores) == 4 and all(len(s.indices) == 2 and "x" not in str(s.indices[1].ty.dtype)
                                         for s in lane_stores)


def test_vector_edge_access_runs_correctly_on_the_host():
    """The guarded vector copy writes every in-bounds lane (lanes 28, 29 of the last vector) and nothing past."""
    import numpy as np

    mod = _guard(_vector_copy_plus_one(30))
    f = tvm.compile(mod, target="llvm")
    a = np.random.default_rng(0).random((2, 30), dtype="float32")
    out = np.zeros((2, 30), "float32")
    out_t = tvm.runtime.tensor(out)
    f(tvm.runtime.tensor(a), out_t)
    np.testing.assert_allclose(out_t.numpy(), a + 1, rtol=1e-6)
