"""Each pass of the Metal backend (`tilelang_metal.pipeline.PASSES`) run alone on a Before kernel written the way the
IR looks at its extension point, against an Expected kernel (structural equality of the bodies):
``metal.simdgroup_accumulators``, ``metal.limit_vector_width``, ``metal.legalize_scopes``,
``metal.pack_half_vectors`` and ``metal.alias_threadgroup_tiles``; each with the kernels it must leave alone.

Tile operators (``tl.fill`` / ``tl.gemm`` / ``tl.copy``, which take buffer regions) are written through `_tl`, a
Python helper the parser calls: ``S.call_intrin`` refuses region arguments."""

from __future__ import annotations

import pytest
import tvm
from tvm.script import tirx as S

from tilelang_metal.passes.alias_threadgroup_tiles import AliasThreadgroupTiles
from tilelang_metal.passes.legalize_scopes import LegalizeScopes
from tilelang_metal.passes.limit_vector_width import LimitVectorWidth
from tilelang_metal.passes.pack_half_vectors import PackHalfVectors
from tilelang_metal.passes.simdgroup_accumulators import SimdgroupAccumulators


def body_equal(a, b):
    import tvm_ffi

    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal


METAL = {"kind": "metal"}


def _run(factory, func):
    """`func` as the ``main`` of a module through the pass `factory` makes for the Metal target."""
    return factory(tvm.target.Target(METAL))(tvm.IRModule({"main": func}))


def _tl(name, *args):
    """The ``tl.<name>`` tile-operator call (void) with `args` (buffer regions included)."""
    from tilelang.ir import tile_call

    return tile_call(f"tl.{name}", list(args))


# ------------------------------------------------------------------------------ metal.simdgroup_accumulators
def test_simdgroup_accumulators_lower_clear_gemm_and_copy_out():
    """A 32x32 float32 accumulator of 4 simdgroups (a 2x2 grid of 16x16, 2x2 matrices each): the clear fills the
    matrices, the gemm walks K=16 in two steps of simdgroup loads and multiply-accumulates between explicit
    barriers, the copy out is one simdgroup_store per matrix straight to device memory."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 64), "float16"), B: S.Buffer((64, 64), "float16"), C: S.Buffer((64, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_local = S.alloc_buffer((32, 32), scope="local.fragment")
        S.evaluate(_tl("fill", C_local[0:32, 0:32], S.float32(0.0)))
        for ko in S.serial(4, annotations={"tl.pipeline_stages": 0}):
            S.evaluate(_tl("copy", A[by * 32:by * 32 + 32, ko * 16:ko * 16 + 16], A_shared[0:32, 0:16]))
            S.evaluate(_tl("copy", B[ko * 16:ko * 16 + 16, bx * 32:bx * 32 + 32], B_shared[0:16, 0:32]))
            S.evaluate(_tl("gemm", A_shared[0:32, 0:16], B_shared[0:16, 0:32], C_local[0:32, 0:32], 0, 0, 0, 0))
        S.evaluate(_tl("copy", C_local[0:32, 0:32], C[by * 32:by * 32 + 32, bx * 32:bx * 32 + 32]))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 64), "float16"), B: S.Buffer((64, 64), "float16"),
                 C: S.Buffer((64, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 2)
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_local = S.alloc_buffer((256,), scope="metal.simdgroup")
        for i in S.unroll(2):
            for j in S.unroll(2):
                S.metal.make_filled_simdgroup_matrix(C_local, i * 2 + j, S.float32(0.0), 8, 8)
        for ko in S.serial(4, annotations={"tl.pipeline_stages": 0}):
            S.evaluate(_tl("copy", A[by * 32:by * 32 + 32, ko * 16:ko * 16 + 16], A_shared[0:32, 0:16]))
            S.evaluate(_tl("copy", B[ko * 16:ko * 16 + 16, bx * 32:bx * 32 + 32], B_shared[0:16, 0:32]))
            A_shared_sg = S.alloc_buffer((128,), "float16", scope="metal.simdgroup")
            B_shared_sg = S.alloc_buffer((128,), "float16", scope="metal.simdgroup")
            S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
            for kk in range(2):
                for i in S.unroll(2):
                    S.metal.simdgroup_load(A_shared_sg, i, S.address_of(A_shared[tx // 32 // 2 * 16 + i * 8, kk * 8]),
                                           16, 8, 8, S.bool(False))
                for j in S.unroll(2):
                    S.metal.simdgroup_load(B_shared_sg, j, S.address_of(B_shared[kk * 8, tx // 32 % 2 * 16 + j * 8]),
                                           32, 8, 8, S.bool(False))
                for i in S.unroll(2):
                    for j in S.unroll(2):
                        S.metal.simdgroup_multiply_accumulate(C_local, i * 2 + j, A_shared_sg, i, B_shared_sg, j,
                                                              C_local, i * 2 + j)
            S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        for i in S.unroll(2):
            for j in S.unroll(2):
                S.metal.simdgroup_store(C_local, i * 2 + j, S.address_of(
                    C[by * 32 + (tx // 32 // 2 * 16 + i * 8), bx * 32 + (tx // 32 % 2 * 16 + j * 8)]),
                    64, 8, 8, S.bool(False))

    assert body_equal(_run(SimdgroupAccumulators, before), expected)


def test_simdgroup_accumulators_transposed_b_clear_accum_and_spare_simdgroups():
    """``transpose_B`` loads B transposed, ``clear_accum`` fills C first; 8 simdgroups over a 2x2 grid of one
    matrix each: the spare four repeat a busy one's work (``warp % 4``); the copy into threadgroup memory ends in
    a barrier (the threads read the tile next)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 16), "float16"), B: S.Buffer((16, 16), "float16"), C: S.Buffer((64, 16), "float32")):
        bx = S.launch_thread("blockIdx.x", 4)
        tx = S.launch_thread("threadIdx.x", 256)
        A_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
        B_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
        C_shared = S.alloc_buffer((16, 16), scope="shared")
        C_local = S.alloc_buffer((16, 16), scope="local.fragment")
        S.evaluate(_tl("gemm", A_shared[0:16, 0:16], B_shared[0:16, 0:16], C_local[0:16, 0:16], 0, 1, 0, 1))
        S.evaluate(_tl("copy", C_local[0:16, 0:16], C_shared[0:16, 0:16]))
        C[bx * 16 + tx // 16, tx % 16] = C_shared[tx // 16, tx % 16]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 16), "float16"), B: S.Buffer((16, 16), "float16"),
                 C: S.Buffer((64, 16), "float32")):
        bx = S.launch_thread("blockIdx.x", 4)
        tx = S.launch_thread("threadIdx.x", 256)
        A_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
        B_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
        C_shared = S.alloc_buffer((16, 16), scope="shared")
        C_local = S.alloc_buffer((64,), scope="metal.simdgroup")
        for i in S.unroll(1):
            for j in S.unroll(1):
                S.metal.make_filled_simdgroup_matrix(C_local, i + j, S.float32(0.0), 8, 8)
        A_shared_sg = S.alloc_buffer((64,), "float16", scope="metal.simdgroup")
        B_shared_sg = S.alloc_buffer((64,), "float16", scope="metal.simdgroup")
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        for kk in range(2):
            for i in S.unroll(1):
                S.metal.simdgroup_load(A_shared_sg, i, S.address_of(A_shared[tx // 32 % 4 // 2 * 8 + i * 8, kk * 8]),
                                       16, 8, 8, S.bool(False))
            for j in S.unroll(1):
                S.metal.simdgroup_load(B_shared_sg, j, S.address_of(B_shared[tx // 32 % 4 % 2 * 8 + j * 8, kk * 8]),
                                       16, 8, 8, S.bool(True))
            for i in S.unroll(1):
                for j in S.unroll(1):
                    S.metal.simdgroup_multiply_accumulate(C_local, i + j, A_shared_sg, i, B_shared_sg, j,
                                                          C_local, i + j)
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        for i in S.unroll(1):
            for j in S.unroll(1):
                S.metal.simdgroup_store(C_local, i + j, S.address_of(
                    C_shared[tx // 32 % 4 // 2 * 8 + i * 8, tx // 32 % 4 % 2 * 8 + j * 8]), 16, 8, 8, S.bool(False))
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        C[bx * 16 + tx // 16, tx % 16] = C_shared[tx // 16, tx % 16]

    assert body_equal(_run(SimdgroupAccumulators, before), expected)


@S.prim_func(check_well_formed=False)
def _acc_used_elementwise(A: S.Buffer((16, 16), "float16"), C: S.Buffer((16, 16), "float32")):
    S.launch_thread("threadIdx.x", 128)
    A_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
    C_local = S.alloc_buffer((16, 16), scope="local.fragment")
    S.evaluate(_tl("fill", C_local[0:16, 0:16], S.float32(0.0)))
    S.evaluate(_tl("gemm", A_shared[0:16, 0:16], A_shared[0:16, 0:16], C_local[0:16, 0:16], 0, 0, 0, 0))
    C_local[0, 0] = C_local[0, 0] + S.float32(1.0)
    S.evaluate(_tl("copy", C_local[0:16, 0:16], C[0:16, 0:16]))


@S.prim_func(check_well_formed=False)
def _acc_copied_to_another_dtype(A: S.Buffer((16, 16), "float16"), C: S.Buffer((16, 16), "float16")):
    S.launch_thread("threadIdx.x", 128)
    A_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
    C_local = S.alloc_buffer((16, 16), scope="local.fragment")
    S.evaluate(_tl("gemm", A_shared[0:16, 0:16], A_shared[0:16, 0:16], C_local[0:16, 0:16], 0, 0, 0, 1))
    S.evaluate(_tl("copy", C_local[0:16, 0:16], C[0:16, 0:16]))


@S.prim_func(check_well_formed=False)
def _acc_partially_copied(A: S.Buffer((16, 16), "float16"), C: S.Buffer((16, 16), "float32")):
    S.launch_thread("threadIdx.x", 128)
    A_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
    C_local = S.alloc_buffer((16, 16), scope="local.fragment")
    S.evaluate(_tl("gemm", A_shared[0:16, 0:16], A_shared[0:16, 0:16], C_local[0:16, 0:16], 0, 0, 0, 1))
    S.evaluate(_tl("copy", C_local[0:8, 0:16], C[0:8, 0:16]))


@S.prim_func(check_well_formed=False)
def _a_operand_in_registers(A: S.Buffer((16, 16), "float16"), C: S.Buffer((16, 16), "float32")):
    S.launch_thread("threadIdx.x", 128)
    A_local = S.alloc_buffer((16, 16), "float16", scope="local.fragment")
    B_shared = S.alloc_buffer((16, 16), "float16", scope="shared")
    C_local = S.alloc_buffer((16, 16), scope="local.fragment")
    S.evaluate(_tl("gemm", A_local[0:16, 0:16], B_shared[0:16, 0:16], C_local[0:16, 0:16], 0, 0, 0, 1))
    S.evaluate(_tl("copy", C_local[0:16, 0:16], C[0:16, 0:16]))


@pytest.mark.parametrize("before", [_acc_used_elementwise, _acc_copied_to_another_dtype, _acc_partially_copied,
                                    _a_operand_in_registers],
                         ids=["elementwise", "narrowing_copy", "partial_copy", "a_in_registers"])
def test_simdgroup_accumulators_leave_other_accumulators_on_the_fragment_path(before):
    assert body_equal(_run(SimdgroupAccumulators, before), before)


# ---------------------------------------------------------------------------------- metal.limit_vector_width
def test_limit_vector_width_splits_wide_loops_into_4_lane_chunks():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 16), "float32"), B: S.Buffer((64, 16), "float32")):
        tx = S.launch_thread("threadIdx.x", 64)
        for v in S.vectorized(16):
            B[tx, v] = A[tx, v] * S.float32(2.0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 16), "float32"), B: S.Buffer((64, 16), "float32")):
        tx = S.launch_thread("threadIdx.x", 64)
        for v_o in range(4):
            for v_v in S.vectorized(4):
                B[tx, v_o * 4 + v_v] = A[tx, v_o * 4 + v_v] * S.float32(2.0)

    assert body_equal(_run(LimitVectorWidth, before), expected)


def test_limit_vector_width_lets_16bit_copies_keep_8_lanes():
    """A plain float16 copy is moved as a packed uint4 later: 16 lanes become two chunks of 8, not four of 4."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 16), "float16"), B: S.Buffer((64, 16), "float16")):
        tx = S.launch_thread("threadIdx.x", 64)
        for v in S.vectorized(16):
            B[tx, v] = A[tx, v]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 16), "float16"), B: S.Buffer((64, 16), "float16")):
        tx = S.launch_thread("threadIdx.x", 64)
        for v_o in range(2):
            for v_v in S.vectorized(8):
                B[tx, v_o * 8 + v_v] = A[tx, v_o * 8 + v_v]

    assert body_equal(_run(LimitVectorWidth, before), expected)


def test_limit_vector_width_splits_strided_16bit_copies_into_4_lane_chunks():
    """A transposing copy scatters with a stride (fuzz seed 20261305: ``Cannot convert type float16x8 to Metal
    type``): it cannot be packed, so it gets no 8-lane exemption; 4-lane chunks, which MSL spells as ``half4``
    even when storage planning makes the contiguous side an array of vectors."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4, 64), "float16"), B: S.Buffer((64, 4), "float16")):
        tx = S.launch_thread("threadIdx.x", 32)
        for v in S.vectorized(8):
            B[tx % 8 * 8 + v, tx // 8] = A[tx // 8, tx % 8 * 8 + v]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 64), "float16"), B: S.Buffer((64, 4), "float16")):
        tx = S.launch_thread("threadIdx.x", 32)
        for v_o in range(2):
            for v_v in S.vectorized(4):
                B[tx % 8 * 8 + (v_o * 4 + v_v), tx // 8] = A[tx // 8, tx % 8 * 8 + (v_o * 4 + v_v)]

    assert body_equal(_run(LimitVectorWidth, before), expected)


def test_a_transposed_half_fragment_lowers_to_checked_msl(clang22):
    """The fuzz program (seed 20261305) itself: the fragment is staged through threadgroup memory, which storage
    planning made an array of ``float16x8`` vectors while the scatter into ``d`` kept 8 lanes."""
    import tilelang
    import tilelang.language as T
    from tilelang_metal.mslcheck import check_msl

    @T.prim_func
    def kernel(A: T.Tensor((1, 1), "float16"), B: T.Tensor((1, 1), "float16")):
        with T.Kernel(T.ceildiv(1, 64), T.ceildiv(1, 4), threads=32) as (bx, by):
            s = T.alloc_fragment((4, 64), "float16")
            d = T.alloc_shared((64, 4), "float16")
            T.copy(A[by * 4, bx * 64], s)
            T.transpose(s, d)
            T.copy(d, B[bx * 64, by * 4])

    source = tilelang.lower(kernel, target="metal").kernel_source
    assert "half8" not in source and "lane * 4" in source
    result = check_msl(source, name="transpose_half.metal", clang=clang22)
    assert result.ok, result.diagnostics


@S.prim_func(check_well_formed=False)
def _bf16_arithmetic(A: S.Buffer((64, 4), "bfloat16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(4):
        A[tx, v] = A[tx, v] + A[tx, v]


@S.prim_func(check_well_formed=False)
def _bf16_arithmetic_serial(A: S.Buffer((64, 4), "bfloat16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(4):
        A[tx, v] = A[tx, v] + A[tx, v]


@S.prim_func(check_well_formed=False)
def _converting(A: S.Buffer((64, 4), "float16"), B: S.Buffer((64, 4), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(4):
        B[tx, v] = S.Cast("float32", A[tx, v])


@S.prim_func(check_well_formed=False)
def _converting_serial(A: S.Buffer((64, 4), "float16"), B: S.Buffer((64, 4), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(4):
        B[tx, v] = S.Cast("float32", A[tx, v])


@S.prim_func(check_well_formed=False)
def _not_a_multiple_of_4(A: S.Buffer((64, 6), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(6):
        A[tx, v] = A[tx, v] + S.float32(1.0)


@S.prim_func(check_well_formed=False)
def _not_a_multiple_of_4_serial(A: S.Buffer((64, 6), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(6):
        A[tx, v] = A[tx, v] + S.float32(1.0)


@pytest.mark.parametrize(("before", "expected"), [(_bf16_arithmetic, _bf16_arithmetic_serial),
                                                  (_converting, _converting_serial),
                                                  (_not_a_multiple_of_4, _not_a_multiple_of_4_serial)],
                         ids=["bf16_arithmetic", "conversion", "extent_6"])
def test_limit_vector_width_runs_what_it_cannot_split_serially(before, expected):
    """bfloat16 arithmetic and element-type conversions (misspelled by the codegen at any width) and a wide loop 4
    does not divide become the same loop, serial."""
    assert body_equal(_run(LimitVectorWidth, before), expected)


@S.prim_func(check_well_formed=False)
def _four_float_lanes(A: S.Buffer((64, 4), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(4):
        A[tx, v] = A[tx, v] + S.float32(1.0)


@S.prim_func(check_well_formed=False)
def _eight_half_lanes_copy(A: S.Buffer((64, 8), "float16"), B: S.Buffer((64, 8), "float16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(8):
        B[tx, v] = A[tx, v]


@S.prim_func(check_well_formed=False)
def _wide_serial_loop(A: S.Buffer((64, 32), "float32")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(32):
        A[tx, v] = A[tx, v] + S.float32(1.0)


@pytest.mark.parametrize("before", [_four_float_lanes, _eight_half_lanes_copy, _wide_serial_loop],
                         ids=["float32x4", "float16x8_copy", "serial"])
def test_limit_vector_width_leaves_loops_metal_spells(before):
    assert body_equal(_run(LimitVectorWidth, before), before)


@S.prim_func(check_well_formed=False)
def _bf16_copy_of_3(A: S.Buffer((64, 3), "bfloat16"), B: S.Buffer((64, 3), "bfloat16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(3):
        B[tx, v] = A[tx, v]


@S.prim_func(check_well_formed=False)
def _bf16_copy_of_3_serial(A: S.Buffer((64, 3), "bfloat16"), B: S.Buffer((64, 3), "bfloat16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(3):
        B[tx, v] = A[tx, v]


@S.prim_func(check_well_formed=False)
def _half_copy_of_5(A: S.Buffer((64, 5), "float16"), B: S.Buffer((64, 5), "float16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in S.vectorized(5):
        B[tx, v] = A[tx, v]


@S.prim_func(check_well_formed=False)
def _half_copy_of_5_serial(A: S.Buffer((64, 5), "float16"), B: S.Buffer((64, 5), "float16")):
    tx = S.launch_thread("threadIdx.x", 64)
    for v in range(5):
        B[tx, v] = A[tx, v]


@pytest.mark.parametrize(("before", "expected"), [(_bf16_copy_of_3, _bf16_copy_of_3_serial),
                                                  (_half_copy_of_5, _half_copy_of_5_serial)],
                         ids=["bfloat16x3", "float16x5"])
def test_limit_vector_width_runs_odd_lane_16bit_copies_serially(before, expected):
    """A 16-bit copy of an odd number of lanes cannot be packed into uint32 lanes: as any other vectorized
    bfloat16 loop (and any float16 loop wider than 4 that 4 does not divide) it must run serially. Found while
    writing these tests: the exemption kept odd counts vectorized, and a bfloat16x3 copy printed as one scalar
    ``bfloat`` copy (2 of 3 elements silently not copied); a float16x5 copy failed in codegen."""
    assert body_equal(_run(LimitVectorWidth, before), expected)


# ------------------------------------------------------------------------------------- metal.legalize_scopes
def test_legalize_scopes_renames_dynamic_shared_and_fragments_in_allocations_and_barriers():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32")):
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64,), scope="shared.dyn")
        R = S.alloc_buffer((1,), scope="local.fragment")
        Sh[tx] = A[tx]
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared.dyn"))
        R[0] = Sh[63 - tx]
        A[tx] = R[0]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "float32")):
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64,), scope="shared")
        R = S.alloc_buffer((1,), scope="local")
        Sh[tx] = A[tx]
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        R[0] = Sh[63 - tx]
        A[tx] = R[0]

    assert body_equal(_run(LegalizeScopes, before), expected)


def test_legalize_scopes_leaves_static_scopes():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32")):
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64,), scope="shared")
        R = S.alloc_buffer((1,), scope="local")
        Sh[tx] = A[tx]
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        R[0] = Sh[63 - tx]
        A[tx] = R[0]

    after = _run(LegalizeScopes, before)
    assert body_equal(after, before) and after["main"].body.same_as(before.body)


# ------------------------------------------------------------------------------------ metal.pack_half_vectors
def test_pack_half_vectors_moves_aligned_16bit_copies_through_uint32_views():
    """float16x8 device -> threadgroup becomes a uint32x4 copy between ``*_u32`` views (index halved); a
    bfloat16x2 copy into and out of a register whose element is a vector becomes a scalar uint32 copy, the
    register re-declared ``uint32``."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4096,), "float16"), B: S.Buffer((4096,), "bfloat16")):
        bx = S.launch_thread("blockIdx.x", 4)
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((1024,), "float16", scope="shared")
        V = S.alloc_buffer((1,), "bfloat16x2", scope="local")
        A_shared[S.Ramp(tx * 8, 1, 8)] = A[S.Ramp(bx * 1024 + tx * 8, 1, 8)]
        V[0] = B[S.Ramp(bx * 1024 + tx * 2, 1, 2)]
        B[S.Ramp(bx * 1024 + tx * 2 + 256, 1, 2)] = V[0]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4096,), "float16"), B: S.Buffer((4096,), "bfloat16")):
        bx = S.launch_thread("blockIdx.x", 4)
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((1024,), "float16", scope="shared")
        V = S.alloc_buffer((1,), "uint32", scope="local")
        A_shared_u32 = S.decl_buffer((512,), "uint32", data=A_shared.data, scope="shared")
        A_u32 = S.decl_buffer((2048,), "uint32", data=A.data)
        A_shared_u32[S.Ramp(tx * 4, 1, 4)] = A_u32[S.Ramp(bx * 512 + tx * 4, 1, 4)]
        B_u32 = S.decl_buffer((2048,), "uint32", data=B.data)
        V[0] = B_u32[bx * 512 + tx]
        B_u32_1 = S.decl_buffer((2048,), "uint32", data=B.data)
        B_u32_1[bx * 512 + tx + 128] = V[0]

    assert body_equal(_run(PackHalfVectors, before), expected)


def test_pack_half_vectors_copies_unaligned_16bit_vectors_element_by_element():
    """An offset not provably a multiple of the lanes (``+ 1``) cannot be packed: a serial loop of element
    copies (the codegen has no correct spelling of the 16-bit vector)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((2048,), "bfloat16"), B: S.Buffer((2048,), "bfloat16")):
        tx = S.launch_thread("threadIdx.x", 128)
        B[S.Ramp(tx * 8 + 1, 1, 8)] = A[S.Ramp(tx * 8, 1, 8)]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((2048,), "bfloat16"), B: S.Buffer((2048,), "bfloat16")):
        tx = S.launch_thread("threadIdx.x", 128)
        for lane in range(8):
            B[tx * 8 + 1 + lane] = A[tx * 8 + lane]

    assert body_equal(_run(PackHalfVectors, before), expected)


def test_pack_half_vectors_copies_strided_16bit_vectors_element_by_element():
    """A transposing copy gathers with a stride (fuzz seed 20261301: ``Cannot convert type int32x8 to Metal
    type``, the index vector of an 8-lane gather): a serial loop of element copies, the stride kept."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((256,), "float16"), B: S.Buffer((256,), "float16")):
        tx = S.launch_thread("threadIdx.x", 32)
        B[S.Ramp(tx * 8, 1, 8)] = A[S.Ramp(tx, 32, 8)]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((256,), "float16"), B: S.Buffer((256,), "float16")):
        tx = S.launch_thread("threadIdx.x", 32)
        for lane in range(8):
            B[tx * 8 + lane] = A[tx + lane * 32]

    assert body_equal(_run(PackHalfVectors, before), expected)


def test_a_transposing_half_copy_through_shared_memory_builds_for_metal():
    """The fuzz program itself, lowered to MSL (no int32x8 index vector; the gather is element by element)."""
    import tilelang
    import tilelang.language as T

    @T.prim_func
    def kernel(A: T.Tensor((1, 1), "float16"), B: T.Tensor((1, 1), "float16")):
        with T.Kernel(T.ceildiv(1, 32), T.ceildiv(1, 8), threads=32) as (bx, by):
            s = T.alloc_shared((8, 32), "float16")
            d = T.alloc_shared((32, 8), "float16")
            T.copy(A[by * 8, bx * 32], s)
            for j, i in T.Parallel(32, 8):
                d[j, i] = T.cast(s[i, j], "float16")
            T.copy(d, B[bx * 32, by * 8])

    source = tilelang.lower(kernel, target="metal").kernel_source
    assert "x8" not in source and "lane * 32" in source


def test_pack_half_vectors_flattens_a_vector_register_whose_copy_cannot_be_packed():
    """A ``float16x8`` register (storage planning's) copied to an unaligned offset: the register becomes a plain
    array of 8 halves, filled by a packed copy and read element by element (it was left a ``float16x8``, which
    the codegen cannot spell: ``Cannot convert type float16x8 to Metal type``)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((2048,), "float16"), B: S.Buffer((2048,), "float16")):
        tx = S.launch_thread("threadIdx.x", 128)
        V = S.alloc_buffer((1,), "float16x8", scope="local")
        V[0] = A[S.Ramp(tx * 8, 1, 8)]
        B[S.Ramp(tx * 8 + 1, 1, 8)] = V[0]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((2048,), "float16"), B: S.Buffer((2048,), "float16")):
        tx = S.launch_thread("threadIdx.x", 128)
        V = S.alloc_buffer((8,), "float16", scope="local")
        V_u32 = S.decl_buffer((4,), "uint32", data=V.data, scope="local")
        A_u32 = S.decl_buffer((1024,), "uint32", data=A.data)
        V_u32[S.Ramp(0, 1, 4)] = A_u32[S.Ramp(tx * 4, 1, 4)]
        for lane in range(8):
            B[tx * 8 + 1 + lane] = V[lane]

    assert body_equal(_run(PackHalfVectors, before), expected)


@pytest.mark.parametrize("offset", [1, 2, 4])
def test_a_half_fragment_copied_to_an_unaligned_shared_column_lowers_to_checked_msl(offset, clang22):
    """A float16 fragment copied into a shared tile at a column offset that is not a multiple of 8: its register
    is a ``float16x8`` after storage planning and the store into the tile cannot be packed."""
    import tilelang
    import tilelang.language as T
    from tilelang_metal.mslcheck import check_msl

    @T.prim_func
    def kernel(A: T.Tensor((4, 64), "float16"), B: T.Tensor((4, 80), "float16")):
        with T.Kernel(1, threads=32):
            s = T.alloc_fragment((4, 64), "float16")
            d = T.alloc_shared((4, 80), "float16")
            T.copy(A[0, 0], s)
            T.copy(s, d[0:4, offset:offset + 64])
            T.copy(d, B[0, 0])

    source = tilelang.lower(kernel, target="metal").kernel_source
    assert "half8" not in source and "lane" in source
    result = check_msl(source, name=f"unaligned_half_copy_{offset}.metal", clang=clang22)
    assert result.ok, result.diagnostics


@S.prim_func(check_well_formed=False)
def _float32_vector_copy(A: S.Buffer((512,), "float32"), B: S.Buffer((512,), "float32")):
    tx = S.launch_thread("threadIdx.x", 128)
    B[S.Ramp(tx * 4, 1, 4)] = A[S.Ramp(tx * 4, 1, 4)]


@S.prim_func(check_well_formed=False)
def _half_vector_arithmetic(A: S.Buffer((512,), "float16"), B: S.Buffer((512,), "float16")):
    tx = S.launch_thread("threadIdx.x", 128)
    B[S.Ramp(tx * 4, 1, 4)] = A[S.Ramp(tx * 4, 1, 4)] + A[S.Ramp(tx * 4, 1, 4)]


@S.prim_func(check_well_formed=False)
def _vector_register_used_in_arithmetic(A: S.Buffer((256,), "float16"), B: S.Buffer((256,), "float16")):
    tx = S.launch_thread("threadIdx.x", 128)
    V = S.alloc_buffer((1,), "float16x2", scope="local")
    V[0] = A[S.Ramp(tx * 2, 1, 2)]
    V[0] = V[0] + V[0]
    B[S.Ramp(tx * 2, 1, 2)] = V[0]


@pytest.mark.parametrize("before", [_float32_vector_copy, _half_vector_arithmetic, _vector_register_used_in_arithmetic],
                         ids=["float32_copy", "half_arithmetic", "vector_register_used_otherwise"])
def test_pack_half_vectors_leaves_what_is_not_a_16bit_copy(before):
    """32-bit vectors, 16-bit arithmetic, and every copy of a vector-element register that is also used in
    arithmetic (it keeps its type, so no access of it is packed)."""
    assert body_equal(_run(PackHalfVectors, before), before)


# ------------------------------------------------------------------------------ metal.alias_threadgroup_tiles
def test_alias_threadgroup_tiles_merges_tiles_into_one_array_of_typed_aliases():
    """Three tiles (2048, 40 and 16 bytes) in one ``buf_shmem``; each tile becomes a pointer of its own type into
    it and a buffer declared on that pointer. ``A_shared`` and ``Red`` are live together (offsets 0 and 2048);
    ``Idx`` is first written after the last read of ``A_shared``, so it takes ``A_shared``'s bytes (offset 0,
    2096 bytes in all) behind a barrier (other threads may still be reading ``A_shared``). The register allocated
    between them stays where it is."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((1024,), "float16"), B: S.Buffer((128,), "float32")):
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((1024,), "float16", scope="shared")
        R = S.alloc_buffer((1,), scope="local")
        Red = S.alloc_buffer((10,), scope="shared")
        Idx = S.alloc_buffer((4,), "int32", scope="shared")
        A_shared[tx] = A[tx]
        Red[tx % 10] = S.Cast("float32", A_shared[tx])
        Idx[tx % 4] = tx
        R[0] = Red[Idx[tx % 4]]
        B[tx] = R[0]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((1024,), "float16"), B: S.Buffer((128,), "float32")):
        tx = S.launch_thread("threadIdx.x", 128)
        buf_shmem = S.alloc_buffer((2096,), "uint8", scope="shared")
        A_ptr: S.let[S.handle("float16", "shared")] = S.reinterpret(S.handle("float16", "shared").ty,
                                                                     S.address_of(buf_shmem[0]))
        A_shared = S.decl_buffer((1024,), "float16", data=A_ptr, scope="shared")
        R = S.alloc_buffer((1,), scope="local")
        Red_ptr: S.let[S.handle("float32", "shared")] = S.reinterpret(S.handle("float32", "shared").ty,
                                                                       S.address_of(buf_shmem[2048]))
        Red = S.decl_buffer((10,), "float32", data=Red_ptr, scope="shared")
        Idx_ptr: S.let[S.handle("int32", "shared")] = S.reinterpret(S.handle("int32", "shared").ty,
                                                                     S.address_of(buf_shmem[0]))
        Idx = S.decl_buffer((4,), "int32", data=Idx_ptr, scope="shared")
        A_shared[tx] = A[tx]
        Red[tx % 10] = S.Cast("float32", A_shared[tx])
        S.evaluate(S.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
        Idx[tx % 4] = tx
        R[0] = Red[Idx[tx % 4]]
        B[tx] = R[0]

    assert body_equal(_run(AliasThreadgroupTiles, before), expected)


@S.prim_func(check_well_formed=False)
def _tiles_in_two_statement_lists(A: S.Buffer((128,), "float32")):
    tx = S.launch_thread("threadIdx.x", 128)
    X = S.alloc_buffer((128,), scope="shared")
    X[tx] = A[tx]
    for k in range(2):
        Y = S.alloc_buffer((128,), scope="shared")
        Y[tx] = X[127 - tx] + S.Cast("float32", k)
        A[tx] = Y[tx]


@S.prim_func(check_well_formed=False)
def _symbolic_tile(A: S.Buffer((128,), "float32"), n: S.int32):
    tx = S.launch_thread("threadIdx.x", 128)
    X = S.alloc_buffer((n,), scope="shared")
    Y = S.alloc_buffer((128,), scope="shared")
    X[tx] = A[tx]
    Y[tx] = X[tx]
    A[tx] = Y[127 - tx]


@S.prim_func(check_well_formed=False)
def _no_threadgroup_tile(A: S.Buffer((128,), "float32")):
    tx = S.launch_thread("threadIdx.x", 128)
    R = S.alloc_buffer((1,), scope="local")
    R[0] = A[tx]
    A[tx] = R[0] * S.float32(2.0)


@pytest.mark.parametrize("before", [_tiles_in_two_statement_lists, _symbolic_tile, _no_threadgroup_tile],
                         ids=["two_statement_lists", "symbolic_size", "no_tile"])
def test_alias_threadgroup_tiles_leaves_kernels_it_cannot_merge(before):
    assert body_equal(_run(AliasThreadgroupTiles, before), before)
