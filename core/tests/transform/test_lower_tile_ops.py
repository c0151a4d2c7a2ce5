import pytest
import tvm
from transform_helpers import as_module, body_equal
from tvm.script import tirx as S

import tilelang.language as T
from tilelang.transform import LayoutInference, LowerTileOps
from tilelang.transform import utils as C


def test_fill_and_copy_become_parallel_nests():
    @T.prim_func
    def before(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32):
            Sh = T.alloc_shared((64,), "float32")
            T.fill(Sh, 1.0)
            T.copy(Sh, A)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 32)
        Sh = S.alloc_buffer((64,), scope="shared.dyn")
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            Sh[i] = S.float32(1.0)
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            A[i] = Sh[i]

    after = LowerTileOps({"kind": "cuda"})(as_module(before))
    assert body_equal(after, expected)


def test_copy_out_of_bounds_is_guarded():
    n = T.dynamic("n")

    @T.prim_func
    def before(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, 64), threads=32) as bx:
            Sh = T.alloc_shared((64,), "float32")
            T.copy(A[bx * 64], Sh)
            T.copy(Sh, B[bx * 64])

    after = LowerTileOps({"kind": "cuda"})(as_module(before))["main"]
    assert len(C.collect(after.body, tvm.tirx.IfThenElse)) == 1  # the store to B
    assert "if_then_else" in after.script()  # the load from A reads 0 past the end


def test_no_tile_op_remains_and_impls_come_from_registry():
    import engine_kernels as K

    mod = as_module(K.flash_attention())
    mod = LowerTileOps({"kind": "cuda"})(LayoutInference({"kind": "cuda"})(mod))
    assert not [e for e in C.collect(mod["main"].body, tvm.tirx.Evaluate) if C.tile_op_of(e)]


def test_gemm_stages_partitioned_fragment_operand_through_shared():
    import engine_kernels as K

    mod = as_module(K.flash_attention())
    mod = LowerTileOps({"kind": "cuda"})(LayoutInference({"kind": "cuda"})(mod))
    names = [str(a.buffer.name) for a in C.allocations(mod["main"].body)]
    assert "acc_s_cast_stage" in names  # gemm(acc_s_cast, V_shared, acc_o): A is a partitioned fragment


def test_tile_op_error_names_kernel_location():
    import tvm_ffi

    from tilelang.errors import LoweringError
    from tilelang.ir import tile_call

    @T.prim_func
    def bad(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=32):
            F = T.alloc_fragment((64, 64), "float32")
            T.copy(A, F)
            T.reduce_sum(F, B, dim=1)

    def break_dim(call):  # dim 7 of a 2-D source: only the tile-op implementation can notice
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "tl.reduce":
            args = list(call.args)
            args[3] = tvm.tirx.IntImm("int32", 7)
            return tile_call("tl.reduce", args)
        return call

    broken = bad.with_body(tvm_ffi.structural_map(bad.body, (tvm.ir.Call, break_dim))) \
        if hasattr(bad, "with_body") else tvm.tirx.PrimFunc(
            bad.params, tvm_ffi.structural_map(bad.body, (tvm.ir.Call, break_dim)), bad.ret_type, bad.attrs)
    with pytest.raises(Exception, match=r"test_lower_tile_ops\.py:\d+: bad: tl\.reduce: dim 7 is out of range"):
        LowerTileOps({"kind": "llvm"})(as_module(broken))
    assert isinstance(C.take_pending_error(), LoweringError)
