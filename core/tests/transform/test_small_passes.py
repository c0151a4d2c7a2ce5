"""InjectSoftwarePipeline, PlanSharedMemory, InsertBarriers, HostChecks, CheckSemantics."""

import engine_kernels as K
import pytest
import tvm
from transform_helpers import as_module, body_equal
from tvm.script import tirx as S

from tilelang.transform import (
    BarrierBeforeSharedReuse,
    CheckSemantics,
    HostChecks,
    InjectSoftwarePipeline,
    InsertBarriers,
    PlanSharedMemory,
)
from tilelang.transform import utils as C


def test_pipelined_loop_becomes_serial():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for k in S.serial(8, annotations={"tl.pipeline_stages": 3, "tl.pipeline_order": [0, 1]}):
            A[k] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        for k in range(8):
            A[k] = S.float32(0)

    assert body_equal(InjectSoftwarePipeline(None)(as_module(before)), expected)


@pytest.mark.parametrize("static,scope", [(True, "shared"), (False, "shared.dyn")])
def test_plan_shared_memory(options, static, scope):
    options({"static_shared_memory": static})
    func = PlanSharedMemory({"kind": "metal"})(as_module(K.gemm()))["main"]
    scopes = {C.scope_of(a.buffer) for a in C.allocations(func.body) if "shared" in C.scope_of(a.buffer)}
    assert scopes == {scope}
    assert int(func.attrs["tl.shared_bytes"]) == (64 * 32 + 32 * 64) * 4


@pytest.mark.parametrize("dtype,nbytes", [("float8_e4m3fn", 1), ("float8_e5m2", 1), ("float16", 2),
                                          ("bfloat16", 2), ("int8", 1), ("float32", 4)])
def test_shared_bytes_of_a_tile_count_its_dtype_width(options, dtype, nbytes):
    """The width of ``float8_e4m3fn`` is 8 bits (the number after the class), not "843" bits from every digit
    of the name: fp8 tiles were counted 105 bytes an element (and the CUDA cp.async plan divided by zero)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), dtype)):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64, 128), dtype, scope="shared.dyn")
        Sh[tx, 0] = A[tx]
        A[tx] = Sh[63 - tx, 0]

    options({"static_shared_memory": False})
    func = PlanSharedMemory({"kind": "cuda"})(as_module(before))["main"]
    assert int(func.attrs["tl.shared_bytes"]) == 64 * 128 * nbytes


def _syncs(mod):
    return [e for e in C.collect(mod["main"].body, tvm.tirx.Evaluate)
            if isinstance(e.value, tvm.ir.Call) and str(e.value.op.name) == "tirx.tvm_storage_sync"]


def test_barriers_between_shared_write_and_read(options):
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64,), scope="shared")
        Sh[tx] = A[tx]
        A[tx] = Sh[63 - tx]

    options({"has_threads": True})
    assert len(_syncs(InsertBarriers({"kind": "cuda"})(as_module(before)))) == 1
    options({"has_threads": False})
    assert not _syncs(InsertBarriers({"kind": "llvm"})(as_module(before)))


def test_host_checks_relax_parameter_alignment():
    func = HostChecks(None)(as_module(K.gemm(dtype="float16")))["main"]
    assert [int(p.ty.data_alignment) for p in func.params] == [2, 2, 4]


def test_check_semantics_rejects_tile_ops_outside_kernel():
    from tilelang.ir import tile_stmt

    A = tvm.tirx.decl_buffer((8,), "float32", name="A")
    func = tvm.tirx.PrimFunc([A], tile_stmt("tl.fill", [tvm.tirx.BufferRegion(
        A, [tvm.ir.Range.from_min_extent(0, 8)]), tvm.tirx.const(0.0, "float32")]))
    func = func.with_attr("tl.source", "kern.py:3").with_attr("global_symbol", "kern")
    with pytest.raises(Exception, match=r"kern\.py:3: kern: tl\.fill is used outside a T\.Kernel launch"):
        CheckSemantics(None)(as_module(func))


def test_check_semantics_knows_the_tile_ops_a_backend_lowers_for_the_target():
    from tilelang.backend import TileOpImpl
    from tilelang.backend.tile_ops import _TILE_OPS, register_tile_op_impl
    from tilelang.ir import register_tile_op, tile_stmt

    register_tile_op("tl.test_backend_only_op")
    A = tvm.tirx.decl_buffer((8,), "float32", name="A")
    stmt = tile_stmt("tl.test_backend_only_op", [tvm.tirx.BufferRegion(A, [tvm.ir.Range.from_min_extent(0, 8)])])
    tx = tvm.tirx.Var("tx", "int32")
    launch = tvm.tirx.AttrStmt(tvm.tirx.IterVar(tvm.ir.Range(0, 32), tx, 1, "threadIdx.x"), "thread_extent", 32, stmt)
    func = tvm.tirx.PrimFunc([A], launch).with_attr("global_symbol", "kern")
    with pytest.raises(Exception, match="unknown tile operator 'tl.test_backend_only_op'"):
        CheckSemantics({"kind": "c"})(as_module(func))
    impl = TileOpImpl("tl.test_backend_only_op", "test", lambda ctx: None)
    register_tile_op_impl(impl, target_kind="c")
    try:
        CheckSemantics({"kind": "c"})(as_module(func))
    finally:
        _TILE_OPS.unregister("c", "tl.test_backend_only_op/test")


def _merged_script(dtype_a: str, n_a: int, n_b: int) -> str:
    """A kernel with shared tiles ``a`` (`dtype_a`) and ``b`` (fp4) after TVM's lowering up to the pool merge."""
    from tilelang.transform import FlattenBuffer, LowerOpaqueBlock, MergeSharedMemoryAllocations, Simplify

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float4_e2m1fn"), B: S.Buffer((16,), "float4_e2m1fn")):
        S.func_attr({"global_symbol": "main"})
        tx = S.launch_thread("threadIdx.x", 32)  # noqa: F841 (the launch frame)
        a = S.alloc_buffer((n_a,), dtype_a, scope="shared.dyn")
        b = S.alloc_buffer((n_b,), "float4_e2m1fn", scope="shared.dyn")
        a[0] = S.Cast(dtype_a, A[0])
        b[0] = A[1]
        B[0] = S.Cast("float4_e2m1fn", a[0])
        B[1] = b[0]

    mod = as_module(before)
    for p in (LowerOpaqueBlock(), FlattenBuffer(), Simplify(), MergeSharedMemoryAllocations()):
        mod = p(mod)
    return mod.script()


def test_merged_sub_byte_tile_is_offset_in_elements():
    """TVM places pool members in bytes but indexes a 4-bit tile in elements (two a byte): an fp4 tile after a
    1024-byte tile starts at element 2048 (TVM alone wrote 1024: byte 512, inside the other tile); one before it
    (4096 elements, 2048 bytes) puts the other tile at its element 512."""
    src = _merged_script("uint32", 256, 4096)
    assert "b[2048]" in src or "a[512]" in src, src


def test_tiny_sub_byte_tiles_take_16_byte_slots():
    # three fp4 values in two bytes: the next tile starts at byte 16, element 32
    src = _merged_script("float4_e2m1fn", 3, 4)
    assert "b[32]" in src and "b[16]" not in src


def test_short_error_keeps_the_message_of_a_tvm_pass_error():
    """TVM's pass errors put the message first, then the pass and a dump of the IR whose last line is
    "(... N lines skipped ...)": the LoweringError shows the message and the pass, not the dump's last line."""
    text = ("Check failed: condition_counter() == 0 (1 vs. 0) : Cannot insert syncs inside condition\n\n"
            "Error in pass: tl.InsertBarriers\nLocation (TVMScript):\nAccess path: <root>.functions\n"
            "# from tvm.script import ir as I\n@I.ir_module\nclass Module:\n    @T.prim_func\n"
            "    def main(Q: T.Buffer((1, 4096), \"float16\")):\n        ^^^^^^^^^^\n(... 370 lines skipped ...)")
    assert C.short_error(RuntimeError(text)) == ("Check failed: condition_counter() == 0 (1 vs. 0) : Cannot insert "
                                               "syncs inside condition (in pass tl.InsertBarriers)")
    plain = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: block_M must divide M"
    assert C.short_error(RuntimeError(plain)) == "ValueError: block_M must divide M"


def _reuse_kernel(dtype_a: str, dtype_b: str, separated: bool):
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), dtype_a), B: S.Buffer((64,), dtype_b)):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        Sa = S.alloc_buffer((64,), dtype_a, scope="shared.dyn")
        Sa[tx] = A[tx]  # a tile written and never read again
        if separated:
            S.tvm_storage_sync("shared")
        Sb = S.alloc_buffer((64,), dtype_b, scope="shared.dyn")
        Sb[tx] = B[tx]
        B[tx] = Sb[tx]

    return before


@pytest.mark.parametrize("dtypes", [("float32", "float16"), ("float16", "float16")])
def test_barrier_before_a_tile_may_take_the_bytes_of_an_ended_one(options, dtypes):
    """Regression (fuzz seed 20261451): StorageRewrite gave a float16 tile the bytes of a dead float32 tile and the
    barrier analysis took ``half[tx]`` and ``float[tx]`` for one thread's element: no barrier, a race."""
    options({"has_threads": True})
    mod = BarrierBeforeSharedReuse({"kind": "cuda"})(as_module(_reuse_kernel(*dtypes, separated=False)))
    seq = C.collect(mod["main"].body, tvm.tirx.SeqStmt)[-1].seq
    kinds = [type(s).__name__ for s in seq]
    # the barrier stands between the last access of Sa and the first of Sb
    assert len(_syncs(mod)) == 1
    sync = next(i for i, s in enumerate(seq) if isinstance(s, tvm.tirx.Evaluate))
    stores = [i for i, k in enumerate(kinds) if k == "BufferStore"]
    assert stores[0] < sync < stores[1], kinds


def test_no_second_barrier_where_one_separates_the_tiles(options):
    options({"has_threads": True})
    mod = BarrierBeforeSharedReuse({"kind": "cuda"})(as_module(_reuse_kernel("float32", "float16", separated=True)))
    assert len(_syncs(mod)) == 1
    options({"has_threads": False})
    mod = BarrierBeforeSharedReuse({"kind": "llvm"})(as_module(_reuse_kernel("float32", "float16", separated=False)))
    assert not _syncs(mod)


def _roles_kernel(marked: bool):
    """A producer role streaming into tile ``p`` and a consumer role reading it in a loop, then writing an
    epilogue tile ``e`` (the warp-specialised shape), the if/else marked as warp roles or not."""
    from tilelang.transform.plan_shared_memory import WARP_ROLES_ATTR

    tx = tvm.tirx.Var("tx", "int32")
    A = tvm.tirx.decl_buffer((64,), "float32", name="A")
    p = tvm.tirx.decl_buffer((64,), "float32", name="p", scope="shared.dyn")
    e = tvm.tirx.decl_buffer((64,), "float32", name="e", scope="shared.dyn")
    k = tvm.tirx.Var("k", "int32")
    produce = tvm.tirx.For(k, 0, 4, tvm.tirx.ForKind.SERIAL, tvm.tirx.BufferStore(p, tvm.tirx.BufferLoad(A, [k]), [k]))
    k2 = tvm.tirx.Var("k2", "int32")
    consume = C.seq([
        tvm.tirx.For(k2, 0, 4, tvm.tirx.ForKind.SERIAL,
                     tvm.tirx.BufferStore(A, tvm.tirx.BufferLoad(p, [k2]), [k2])),
        tvm.tirx.BufferStore(e, tvm.tirx.BufferLoad(A, [tx]), [tx]),
        tvm.tirx.BufferStore(A, tvm.tirx.BufferLoad(e, [tx]), [tx]),
    ])
    roles = tvm.tirx.IfThenElse(tx == 32, produce, consume)
    if marked:
        zero = tvm.tirx.IntImm("int32", 0)
        roles = tvm.tirx.AttrStmt(zero, WARP_ROLES_ATTR, zero, roles)
    iv = tvm.tirx.IterVar(tvm.ir.Range(0, 64), tx, 1, "threadIdx.x")
    body = tvm.tirx.AttrStmt(iv, "thread_extent", 64, C.seq([tvm.tirx.AllocBuffer(p), tvm.tirx.AllocBuffer(e),
                                                             roles]))
    func = tvm.tirx.PrimFunc([A.data], body, buffer_map={A.data: A}).with_attr("global_symbol", "main")
    return as_module(func)


@pytest.mark.parametrize("marked", [True, False])
def test_warp_roles_are_planned_in_order(marked):
    """A warp-role if/else (`WARP_ROLES_ATTR`) is planned as its branches' statements, in order: the epilogue tile
    takes the bytes of the tile both roles streamed through; an unmarked if is one statement (no reuse). The
    if/else comes back as it was."""
    from tilelang.transform import FlattenBuffer, MergeSharedMemoryAllocations

    mod = MergeSharedMemoryAllocations()(FlattenBuffer()(_roles_kernel(marked)))
    pools = [a for a in C.allocations(mod["main"].body) if C.scope_of(a.buffer) == "shared.dyn"]
    assert len(pools) == 1
    assert int(pools[0].buffer.ty.shape[0]) == (256 if marked else 512)
    ifs = C.collect(mod["main"].body, tvm.tirx.IfThenElse)
    assert len(ifs) == 1 and ifs[0].else_case is not None
    attrs = C.collect(mod["main"].body, tvm.tirx.AttrStmt, lambda a: "warp_roles" in str(a.attr_key))
    assert [str(a.attr_key) for a in attrs] == (["tl.warp_roles"] if marked else [])


@pytest.mark.parametrize("partial", [False, True])
def test_a_condition_reading_a_shared_tile_is_read_by_a_statement(options, partial):
    """``if k <= S[tx]:`` (the reference's topk selector): TVM's access analysis takes reads only from statements
    and failed its ``allow_append_`` check on the condition. The condition is bound to a variable just before its
    ``if``, and the barrier after the write to S comes before that read."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "int32"), B: S.Buffer((64,), "int32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((65,), "int32", scope="shared")
        Sh[tx] = A[tx]
        B[tx] = 0
        if A[0] <= Sh[tx + 1]:
            B[tx] = 1

    options({"has_threads": True, "partial_barriers": partial})
    mod = InsertBarriers({"kind": "cuda"})(as_module(before))
    binds = C.collect(mod["main"].body, tvm.tirx.Bind)
    assert len(binds) == 1 and C.collect(binds[0].value, tvm.ir.TensorLoad)
    (branch,) = C.collect(mod["main"].body, tvm.tirx.IfThenElse)
    assert isinstance(branch.condition, tvm.ir.Var) and branch.condition.same_as(binds[0].var)
    seq = C.collect(mod["main"].body, tvm.tirx.SeqStmt)[-1].seq
    kinds = [type(s).__name__ for s in seq]
    assert len(_syncs(mod)) == 1 and kinds.index("Evaluate") < kinds.index("Bind"), kinds
