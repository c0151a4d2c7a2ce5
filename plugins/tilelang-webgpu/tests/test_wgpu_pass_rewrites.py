"""Each pass of the WebGPU backend (`tilelang_webgpu.pipeline.PASSES`) run alone on a Before kernel written the way
the IR looks at its extension point, against an Expected kernel (structural equality of the bodies) or, for the
checks, the error it raises: ``webgpu.check_dtypes``, ``webgpu.debug_log``, ``webgpu.fold_blockidx_z``,
``webgpu.split_wide_vectors``, ``webgpu.hoist_gemm_accumulators``, ``webgpu.unroll_register_loops``,
``webgpu.check_workgroup_memory``, ``webgpu.legalize_float_literals`` and ``webgpu.mark_vector_globals``; each
with the kernels it must leave alone."""

from __future__ import annotations

import pytest
import tvm
from tvm.script import tirx as S

from tilelang_webgpu.passes.check_dtypes import CheckDtypes
from tilelang_webgpu.passes.check_workgroup_memory import CheckWorkgroupMemory
from tilelang_webgpu.passes.debug_log import LOG_WORDS, RECORD_WORDS, RECORDS_ATTR, DebugLog, records_of
from tilelang_webgpu.passes.fold_blockidx_z import FoldBlockIdxZ
from tilelang_webgpu.passes.hoist_gemm_accumulators import HoistGemmAccumulators
from tilelang_webgpu.passes.legalize_float_literals import LegalizeFloatLiterals
from tilelang_webgpu.passes.mark_vector_globals import MARK, MarkVectorGlobals
from tilelang_webgpu.passes.split_wide_vectors import SplitWideVectors
from tilelang_webgpu.passes.unroll_register_loops import UnrollRegisterLoops


def body_equal(a, b):
    import tvm_ffi

    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal


def _webgpu(**attrs):
    return tvm.target.Target({"kind": "webgpu", **attrs})


def _run(factory, func, target=None):
    """`func` as the ``main`` of a module through the pass `factory` makes for `target` (plain webgpu)."""
    return factory(target if target is not None else _webgpu())(tvm.IRModule({"main": func}))


# ---------------------------------------------------------------------------------- webgpu.check_dtypes
def test_check_dtypes_passes_wgsl_types_unchanged():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float16"), B: S.Buffer((8,), "int32")):
        S.func_attr({"global_symbol": "kern"})
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 8)
        Sh = S.alloc_buffer((8,), "float32", scope="shared")
        Sh[tx] = S.Cast("float32", A[tx])
        B[tx] = S.Cast("int32", Sh[7 - tx])

    assert body_equal(_run(CheckDtypes, before), before)


def test_check_dtypes_names_every_tensor_and_tile_wgsl_cannot_store():
    from tilelang.errors import LoweringError
    from tilelang.transform import utils as C

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "bfloat16"), B: S.Buffer((8,), "float32")):
        S.func_attr({"global_symbol": "kern"})
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 8)
        Sh = S.alloc_buffer((8,), "int8", scope="shared")
        Sh[tx] = S.Cast("int8", A[tx])
        B[tx] = S.Cast("float32", Sh[tx])

    with pytest.raises(Exception, match=r"kern: target 'webgpu' cannot store A \(bfloat16\), Sh \(int8\): "
                                        r"WGSL has no bfloat16.*; WGSL has no 8-bit integer"):
        _run(CheckDtypes, before)
    assert isinstance(C.take_pending_error(), LoweringError)  # the engine re-raises it at the kernel's source


# ---------------------------------------------------------------------------------- webgpu.debug_log
def test_debug_log_print_becomes_a_log_record():
    """``tl.print(msg, value)`` (as at ``post_layout``) becomes a record reserved with ``atomicAdd`` in the new
    trailing log parameter: id, block and thread indices (absent ones 0), element index 0, the value's f32 bits."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 4)
        S.evaluate(S.call_intrin("handle", "tl.print", "a", A[bx * 4 + tx]))
        A[bx * 4 + tx] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32"), L: S.Buffer((16384,), "uint32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 4)
        slot = S.alloc_buffer((1,), "uint32", scope="local")
        slot[0] = S.call_extern("uint32", "atomicAdd", S.address_of(L[0]), S.uint32(9))
        if slot[0] + S.uint32(10) <= S.uint32(16384):
            L[S.Cast("int32", slot[0] + S.uint32(1))] = S.uint32(0)
            L[S.Cast("int32", slot[0] + S.uint32(2))] = S.Cast("uint32", bx)
            L[S.Cast("int32", slot[0] + S.uint32(3))] = S.Cast("uint32", 0)
            L[S.Cast("int32", slot[0] + S.uint32(4))] = S.Cast("uint32", 0)
            L[S.Cast("int32", slot[0] + S.uint32(5))] = S.Cast("uint32", tx)
            L[S.Cast("int32", slot[0] + S.uint32(6))] = S.Cast("uint32", 0)
            L[S.Cast("int32", slot[0] + S.uint32(7))] = S.Cast("uint32", 0)
            L[S.Cast("int32", slot[0] + S.uint32(8))] = S.Cast("uint32", 0)
            L[S.Cast("int32", slot[0] + S.uint32(9))] = S.reinterpret("uint32", A[bx * 4 + tx])
        A[bx * 4 + tx] = S.float32(0)

    assert (RECORD_WORDS, LOG_WORDS) == (9, 16384)  # the constants spelled in `expected`
    after = _run(DebugLog, before)["main"]
    assert body_equal(after, expected)
    assert [str(p.name) for p in after.params] == ["A", "tl_debug_log"]
    assert records_of([after]) == [{"kind": "print", "msg": "a", "buffer": "", "dtype":
                                                          "float32"}]


def test_debug_log_assert_writes_its_record_only_when_the_condition_fails():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 4)
        S.evaluate(S.call_intrin("handle", "tl.device_assert", A[bx * 4 + tx] < S.float32(3.0), "big"))
        A[bx * 4 + tx] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32"), L: S.Buffer((16384,), "uint32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 4)
        if not A[bx * 4 + tx] < S.float32(3.0):
            slot = S.alloc_buffer((1,), "uint32", scope="local")
            slot[0] = S.call_extern("uint32", "atomicAdd", S.address_of(L[0]), S.uint32(9))
            if slot[0] + S.uint32(10) <= S.uint32(16384):
                L[S.Cast("int32", slot[0] + S.uint32(1))] = S.uint32(0)
                L[S.Cast("int32", slot[0] + S.uint32(2))] = S.Cast("uint32", bx)
                L[S.Cast("int32", slot[0] + S.uint32(3))] = S.Cast("uint32", 0)
                L[S.Cast("int32", slot[0] + S.uint32(4))] = S.Cast("uint32", 0)
                L[S.Cast("int32", slot[0] + S.uint32(5))] = S.Cast("uint32", tx)
                L[S.Cast("int32", slot[0] + S.uint32(6))] = S.Cast("uint32", 0)
                L[S.Cast("int32", slot[0] + S.uint32(7))] = S.Cast("uint32", 0)
                L[S.Cast("int32", slot[0] + S.uint32(8))] = S.Cast("uint32", 0)
                L[S.Cast("int32", slot[0] + S.uint32(9))] = S.uint32(0)
        A[bx * 4 + tx] = S.float32(0)

    after = _run(DebugLog, before)["main"]
    assert body_equal(after, expected)
    assert records_of([after]) == [{"kind": "assert", "msg": "big", "buffer": "", "dtype":
                                                          ""}]


def test_debug_log_leaves_kernels_without_debug_calls_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        tx = S.launch_thread("threadIdx.x", 4)
        S.evaluate(S.call_extern("handle", "print", A[bx * 4 + tx]))
        A[bx * 4 + tx] = S.float32(0)

    after = _run(DebugLog, before)["main"]
    assert body_equal(after, before)
    assert len(after.params) == 1 and RECORDS_ATTR not in after.attrs


# ---------------------------------------------------------------------------------- webgpu.fold_blockidx_z
def test_fold_blockidx_z_into_blockidx_y():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4, 3, 2), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 3)
        bz = S.launch_thread("blockIdx.z", 4)
        tx = S.launch_thread("threadIdx.x", 1)
        A[bz, by, bx + tx] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 3, 2), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by_bz = S.launch_thread("blockIdx.y", 12)
        tx = S.launch_thread("threadIdx.x", 1)
        A[by_bz % 4, by_bz // 4, bx + tx] = S.float32(0)

    assert body_equal(_run(FoldBlockIdxZ, before), expected)


def test_fold_blockidx_z_without_blockidx_y_becomes_blockidx_y():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4, 2), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        bz = S.launch_thread("blockIdx.z", 4)
        A[bz, bx] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 2), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        bz = S.launch_thread("blockIdx.y", 4)
        A[bz, bx] = S.float32(0)

    assert body_equal(_run(FoldBlockIdxZ, before), expected)


def test_fold_blockidx_z_leaves_2d_grids_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((3, 2), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 3)
        tz = S.launch_thread("threadIdx.z", 1)
        A[by + tz, bx] = S.float32(0)

    assert body_equal(_run(FoldBlockIdxZ, before), before)


# ---------------------------------------------------------------------------------- webgpu.split_wide_vectors
def test_split_wide_vectors_into_4_lanes():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float32")):
        for i in S.vectorized(2, 10):
            B[i] = A[i] * S.float32(2)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float32")):
        for i_o in range(2):
            for i_v in S.vectorized(4):
                B[2 + i_o * 4 + i_v] = A[2 + i_o * 4 + i_v] * S.float32(2)

    assert body_equal(_run(SplitWideVectors, before), expected)


def test_split_wide_vectors_into_2_lanes_or_serial():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32")):
        for i in S.vectorized(6):
            A[i] = S.float32(1)
        for j in S.vectorized(5):
            A[j + 8] = S.float32(2)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((16,), "float32")):
        for i_o in range(3):
            for i_v in S.vectorized(2):
                A[0 + i_o * 2 + i_v] = S.float32(1)
        for j in range(5):
            A[j + 8] = S.float32(2)

    assert body_equal(_run(SplitWideVectors, before), expected)


def test_split_wide_vectors_leaves_wgsl_vectors_and_serial_loops_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32")):
        for i in S.vectorized(4):
            A[i] = S.float32(1)
        for j in S.vectorized(2):
            A[j + 4] = S.float32(2)
        for k in range(8):
            A[k + 8] = S.float32(3)

    assert body_equal(_run(SplitWideVectors, before), before)


# ---------------------------------------------------------------------------------- webgpu.hoist_gemm_accumulators
def _gemm_k_loop(extra_c_write: bool):
    """A K loop as the register-blocked GEMM leaves it at ``post_storage``: stage A, move C into the accumulator
    (``tl.webgpu_gemm_in``), multiply-accumulate, move it back (``tl.webgpu_gemm_out``); `extra_c_write` adds a
    statement that writes C inside the loop (so hoisting is unsafe)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4, 16), "float32"), B: S.Buffer((16,), "float32")):
        tx = S.launch_thread("threadIdx.x", 4)
        A_shared = S.alloc_buffer((4, 4), scope="shared")
        C_local = S.alloc_buffer((4,), scope="local")
        for k in range(4):
            A_shared[tx, 0:4] = A[tx, S.Ramp(k * 4, 1, 4)]
            C_local_acc = S.alloc_buffer((4,), scope="local")
            with S.attr(C_local_acc.data, "tl.webgpu_gemm_in", 0):
                for i in range(4):
                    C_local_acc[i] = C_local[i]
            for kk in range(4):
                for i in range(4):
                    C_local_acc[i] = C_local_acc[i] + A_shared[i, kk] * B[k * 4 + kk]
            with S.attr(C_local_acc.data, "tl.webgpu_gemm_out", 0):
                for i in range(4):
                    C_local[i] = C_local_acc[i]
            if extra_c_write:
                C_local[0] = C_local[0] * S.float32(0.5)

    return before


def test_hoist_gemm_accumulators_out_of_the_k_loop():
    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 16), "float32"), B: S.Buffer((16,), "float32")):
        tx = S.launch_thread("threadIdx.x", 4)
        A_shared = S.alloc_buffer((4, 4), scope="shared")
        C_local = S.alloc_buffer((4,), scope="local")
        C_local_acc = S.alloc_buffer((4,), scope="local")
        for i in range(4):
            C_local_acc[i] = C_local[i]
        for k in range(4):
            A_shared[tx, 0:4] = A[tx, S.Ramp(k * 4, 1, 4)]
            for kk in range(4):
                for i in range(4):
                    C_local_acc[i] = C_local_acc[i] + A_shared[i, kk] * B[k * 4 + kk]
        for i in range(4):
            C_local[i] = C_local_acc[i]

    assert body_equal(_run(HoistGemmAccumulators, _gemm_k_loop(False)), expected)


def test_hoist_gemm_accumulators_keeps_moves_when_the_loop_touches_c_but_drops_the_marks():
    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 16), "float32"), B: S.Buffer((16,), "float32")):
        tx = S.launch_thread("threadIdx.x", 4)
        A_shared = S.alloc_buffer((4, 4), scope="shared")
        C_local = S.alloc_buffer((4,), scope="local")
        for k in range(4):
            A_shared[tx, 0:4] = A[tx, S.Ramp(k * 4, 1, 4)]
            C_local_acc = S.alloc_buffer((4,), scope="local")
            for i in range(4):
                C_local_acc[i] = C_local[i]
            for kk in range(4):
                for i in range(4):
                    C_local_acc[i] = C_local_acc[i] + A_shared[i, kk] * B[k * 4 + kk]
            for i in range(4):
                C_local[i] = C_local_acc[i]
            C_local[0] = C_local[0] * S.float32(0.5)

    assert body_equal(_run(HoistGemmAccumulators, _gemm_k_loop(True)), expected)


def test_hoist_gemm_accumulators_leaves_unmarked_loops_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32")):
        C_local = S.alloc_buffer((4,), scope="local")
        for k in range(4):
            acc = S.alloc_buffer((4,), scope="local")
            for i in range(4):
                acc[i] = C_local[i]
            for i in range(4):
                acc[i] = acc[i] + A[k * 4 + i]
            for i in range(4):
                C_local[i] = acc[i]

    assert body_equal(_run(HoistGemmAccumulators, before), before)


# ---------------------------------------------------------------------------------- webgpu.unroll_register_loops
def test_unroll_register_loops_indexing_registers():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32")):
        tx = S.launch_thread("threadIdx.x", 8)
        C_local = S.alloc_buffer((8,), scope="local")
        for k in range(2):
            for v in S.vectorized(4):
                C_local[k * 4 + v] = S.float32(0)
        for i in range(8):
            C_local[i] = C_local[i] + A[tx * 8 + i]
        for i in range(8):
            A[tx * 8 + i] = C_local[i]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "float32")):
        tx = S.launch_thread("threadIdx.x", 8)
        C_local = S.alloc_buffer((8,), scope="local")
        for k in S.unroll(2):
            for v in S.vectorized(4):
                C_local[k * 4 + v] = S.float32(0)
        for i in S.unroll(8):
            C_local[i] = C_local[i] + A[tx * 8 + i]
        for i in S.unroll(8):
            A[tx * 8 + i] = C_local[i]

    assert body_equal(_run(UnrollRegisterLoops, before), expected)


def test_unroll_register_loops_leaves_other_loops_alone():
    """Loops over shared memory, over a register with a constant index, longer than 64 iterations, or whose unrolled
    body would exceed 256 statements stay serial."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128,), "float32")):
        tx = S.launch_thread("threadIdx.x", 8)
        Sh = S.alloc_buffer((8,), scope="shared")
        R = S.alloc_buffer((128,), scope="local")
        for i in range(8):
            Sh[i] = A[tx * 8 + i]
        for i in range(8):
            R[0] = R[0] + A[i]
        for i in range(128):
            R[i] = A[i]
        for i in range(64):
            R[i] = A[i]
            R[i + 64] = A[i]
            A[i] = R[i] * S.float32(2)
            A[i + 64] = R[i + 64]
            R[i] = S.float32(0)

    assert body_equal(_run(UnrollRegisterLoops, before), before)


def test_unroll_register_loops_limits_hold_per_loop_so_a_nest_unrolls_whole():
    """The limits hold per loop with its body as written (an inner loop already unrolled counts once): a 32 x 32
    nest of register stores unrolls whole, past UNROLL_MAX_STATEMENTS for the nest - by design (see the pass's
    docstring: a partly unrolled nest keeps dynamic register indices)."""
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((1024,), "float32")):
        R = S.alloc_buffer((1024,), scope="local")
        for i in range(32):
            for j in range(32):
                R[i * 32 + j] = A[i * 32 + j]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((1024,), "float32")):
        R = S.alloc_buffer((1024,), scope="local")
        for i in S.unroll(32):
            for j in S.unroll(32):
                R[i * 32 + j] = A[i * 32 + j]

    assert body_equal(_run(UnrollRegisterLoops, before), expected)


# ---------------------------------------------------------------------------------- webgpu.check_workgroup_memory
def _workgroup_kernel(words_a: int, words_b: int):
    """A device kernel (as at ``device_module``) with two workgroup arrays of `words_a` / `words_b` f32."""

    @S.prim_func(check_well_formed=False)
    def kern(A_ptr: S.handle("float32", "global")):
        A = S.decl_buffer((64,), data=A_ptr)
        with S.launch_thread("blockIdx.x", 1):
            A_shared = S.alloc_buffer((words_a,), scope="shared")
            B_shared = S.alloc_buffer((words_b,), scope="shared")
            with S.launch_thread("threadIdx.x", 64) as tx:
                A_shared[tx] = A[tx]
                B_shared[tx] = A_shared[63 - tx]
                A[tx] = B_shared[tx]

    return kern


def test_check_workgroup_memory_passes_kernels_within_the_limit_unchanged():
    before = _workgroup_kernel(4096, 4096)  # exactly 32 KiB
    assert body_equal(_run(CheckWorkgroupMemory, before), before)
    bigger = _workgroup_kernel(8192, 4096)  # 48 KiB where the target allows 64 KiB
    assert body_equal(_run(CheckWorkgroupMemory, bigger, _webgpu(max_shared_memory_per_block=65536)), bigger)


def test_check_workgroup_memory_lists_the_arrays_over_the_limit():
    before = _workgroup_kernel(4096, 8192)
    with pytest.raises(Exception, match=r"kernel 'main' needs 49152 bytes of workgroup memory but this WebGPU "
                                            r"target allows 32768 \(max_shared_memory_per_block\): "
                                            r"B_shared \(float32, 32768 B\), A_shared \(float32, 16384 B\)\."):
        _run(CheckWorkgroupMemory, before)


# ---------------------------------------------------------------------------------- webgpu.legalize_float_literals
def test_legalize_float_literals_spells_inf_and_nan_as_bitcasts():
    @S.prim_func(check_well_formed=False)
    def before(A_ptr: S.handle("float32", "global"), H_ptr: S.handle("float16", "global")):
        A = S.decl_buffer((4,), data=A_ptr)
        H = S.decl_buffer((4,), "float16", data=H_ptr)
        with S.launch_thread("threadIdx.x", 1):
            A[0] = S.max(A[0], S.float32("-inf"))
            A[1] = S.float32("inf")
            A[2] = S.float32("nan")
            A[3] = S.float32(1.5)
            H[0] = S.float16("inf")

    @S.prim_func(check_well_formed=False)
    def expected(A_ptr: S.handle("float32", "global"), H_ptr: S.handle("float16", "global")):
        A = S.decl_buffer((4,), data=A_ptr)
        H = S.decl_buffer((4,), "float16", data=H_ptr)
        with S.launch_thread("threadIdx.x", 1):
            A[0] = S.max(A[0], S.reinterpret("float32", S.uint32(0xFF800000)))
            A[1] = S.reinterpret("float32", S.uint32(0x7F800000))
            A[2] = S.reinterpret("float32", S.uint32(0x7FC00000))
            A[3] = S.float32(1.5)
            H[0] = S.Cast("float16", S.reinterpret("float32", S.uint32(0x7F800000)))

    assert body_equal(_run(LegalizeFloatLiterals, before), expected)


def test_legalize_float_literals_leaves_finite_literals_alone():
    @S.prim_func(check_well_formed=False)
    def before(A_ptr: S.handle("float32", "global")):
        A = S.decl_buffer((4,), data=A_ptr)
        with S.launch_thread("threadIdx.x", 1):
            A[0] = S.max(A[0], S.float32(-3.4028234663852886e38))
            A[1] = S.float32(0) * A[1] + S.float32(1e-30)

    assert body_equal(_run(LegalizeFloatLiterals, before), before)


# ---------------------------------------------------------------------------------- webgpu.mark_vector_globals
def test_mark_vector_globals_renames_buffers_with_aligned_4_lane_accesses():
    """Structural equality maps free variables whatever their names, so the rename (the pass's whole effect) is
    checked on the parameters and on the ``DeclBuffer`` lines of the printed script as well."""

    @S.prim_func(check_well_formed=False)
    def before(A_ptr: S.handle("float32", "global"), B_ptr: S.handle("float32", "global"),
               C_ptr: S.handle("float32", "global")):
        A = S.decl_buffer((64,), data=A_ptr)
        B = S.decl_buffer((68,), data=B_ptr)
        C = S.decl_buffer((64,), data=C_ptr)
        with S.launch_thread("threadIdx.x", 16) as tx:
            C[S.Ramp(tx * 4, 1, 4)] = A[S.Ramp(tx * 4, 1, 4)] + B[S.Ramp(tx * 4 + 1, 1, 4)]
            if tx == 0:
                C[0] = A[63]

    @S.prim_func(check_well_formed=False)
    def expected(A_ptr_tlv4: S.handle("float32", "global"), B_ptr: S.handle("float32", "global"),
                 C_ptr_tlv4: S.handle("float32", "global")):
        A = S.decl_buffer((64,), data=A_ptr_tlv4)
        B = S.decl_buffer((68,), data=B_ptr)
        C = S.decl_buffer((64,), data=C_ptr_tlv4)
        with S.launch_thread("threadIdx.x", 16) as tx:
            C[S.Ramp(tx * 4, 1, 4)] = A[S.Ramp(tx * 4, 1, 4)] + B[S.Ramp(tx * 4 + 1, 1, 4)]
            if tx == 0:
                C[0] = A[63]

    after = _run(MarkVectorGlobals, before)["main"]
    assert body_equal(after, expected)
    assert [str(p.name) for p in after.params] == [f"A_ptr{MARK}", "B_ptr", f"C_ptr{MARK}"]
    decls = [line.strip() for line in after.script().splitlines() if "decl_buffer" in line]
    assert decls == [f"A = T.decl_buffer((64,), data=A_ptr{MARK})",
                     "B = T.decl_buffer((68,), data=B_ptr)",
                     f"C = T.decl_buffer((64,), data=C_ptr{MARK})"]


def test_mark_vector_globals_leaves_unqualified_buffers_alone():
    """Misaligned or 2-lane vector accesses, scalar-only use, a count not a multiple of 4, an int8 element type or
    an ``address_of`` keep every buffer scalar."""

    @S.prim_func(check_well_formed=False)
    def before(A_ptr: S.handle("float32", "global"), B_ptr: S.handle("float32", "global"),
               C_ptr: S.handle("float32", "global"), D_ptr: S.handle("float32", "global"),
               E_ptr: S.handle("int8", "global"), F_ptr: S.handle("float32", "global")):
        A = S.decl_buffer((68,), data=A_ptr)
        B = S.decl_buffer((68,), data=B_ptr)
        C = S.decl_buffer((64,), data=C_ptr)
        D = S.decl_buffer((66,), data=D_ptr)
        E = S.decl_buffer((64,), "int8", data=E_ptr)
        F = S.decl_buffer((64,), data=F_ptr)
        with S.launch_thread("threadIdx.x", 16) as tx:
            B[S.Ramp(tx * 4 + 2, 1, 4)] = A[S.Ramp(tx * 4 + 2, 1, 4)]
            C[S.Ramp(tx * 4, 1, 2)] = S.Broadcast(S.float32(0), 2)
            C[tx] = S.float32(1)
            D[S.Ramp(tx * 4, 1, 4)] = S.Broadcast(S.float32(0), 4)
            E[S.Ramp(tx * 4, 1, 4)] = S.Broadcast(S.int8(0), 4)
            F[S.Ramp(tx * 4, 1, 4)] = S.Broadcast(S.float32(0), 4)
            S.evaluate(S.call_extern("float32", "atomicAdd", S.address_of(F[0]), S.float32(1)))

    after = _run(MarkVectorGlobals, before)["main"]
    assert body_equal(after, before)
    assert [str(p.name) for p in after.params] == [str(p.name) for p in before.params]


def test_mark_vector_globals_is_off_with_its_pipeline_option(monkeypatch):
    from tilelang.transform import utils as transform_utils

    monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: {"webgpu_vector_globals": False})

    @S.prim_func(check_well_formed=False)
    def before(A_ptr: S.handle("float32", "global")):
        A = S.decl_buffer((64,), data=A_ptr)
        with S.launch_thread("threadIdx.x", 16) as tx:
            A[S.Ramp(tx * 4, 1, 4)] = A[S.Ramp(tx * 4, 1, 4)] * S.Broadcast(S.float32(2), 4)

    after = _run(MarkVectorGlobals, before)["main"]
    assert body_equal(after, before)
    assert [str(p.name) for p in after.params] == ["A_ptr"]
