"""Before/Expected tests of CUDA passes, each run alone at its extension point and compared by structural equality:
cuda.mma_accumulators (pre_layout), cuda.mark_pipeline_stages (post_layout), cuda.async_copy_pipeline,
cuda.swizzle_shared_operands (ldmatrix XOR swizzle and the wgmma descriptor layout) and cuda.share_scratch_tiles
(post_tile_lowering), plus for each an input the pass must leave as it is.

TVMScript cannot spell tile-op calls (``T.tl.copy(A[0:32, 0:16], ...)`` prints but does not parse), so the
kernels build them with `_tile`, a Python call the parser evaluates to the same ``tvm.ir.Call``.
"""

from __future__ import annotations

import pytest
import tvm
import tvm_ffi
from tvm import tirx
from tvm.script import tirx as S

from tilelang.ir import tile_call
from tilelang_cuda.passes.async_pipeline import AsyncCopyPipeline, MarkPipelineStages
from tilelang_cuda.passes.mma_accumulators import MMAAccumulators
from tilelang_cuda.passes.share_scratch_tiles import ShareScratchTiles
from tilelang_cuda.passes.swizzle_shared_operands import SwizzleSharedOperands

P = "tl.cuda.pipeline_producer"
Q = "tl.cuda.pipeline_consumer"


def _target(arch):
    return tvm.target.Target({"kind": "cuda", "arch": arch})


def _run(factory, func, arch="sm_80"):
    return factory(_target(arch))(tvm.IRModule({"main": func}))


def _tile(name, *args):
    """A tile-op call (``tl.copy``, ``tl.gemm``, ...) inside a TVMScript kernel."""
    return tile_call(name, list(args))


def _sync():
    """``__syncthreads()`` as the CUDA lowering emits it (TVMScript's ``tvm_storage_sync`` adds two arguments)."""
    return tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared")


def _imm(text):
    """The ``StringImm`` node of a pipeline marker (``T.attr("..", ..)`` would hold a plain string)."""
    return tvm.ir.StringImm(text)


def body_equal(a, b):
    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal


# ----------------------------------------------------------------------------- cuda.mma_accumulators
def test_mma_accumulators_put_the_gemm_fragment_in_mma_registers():
    """One warp, a 32x32 fp32 accumulator of an fp16 gemm: 2x4 m16n8 atoms, 32 registers per thread. The fill,
    the gemm's C, the T.Parallel epilogue and the copy out all run over the thread's registers."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((32, 64), "float16"), B: S.Buffer((64, 32), "float16"), C: S.Buffer((32, 32), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_l = S.alloc_buffer((32, 32), "float32", scope="local.fragment")
        S.evaluate(_tile("tl.fill", C_l[0:32, 0:32], S.float32(0.0)))
        for k in S.serial(4):
            S.evaluate(_tile("tl.copy", A[0:32, k * 16:k * 16 + 16], A_s[0:32, 0:16]))
            S.evaluate(_tile("tl.copy", B[k * 16:k * 16 + 16, 0:32], B_s[0:16, 0:32]))
            S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], B_s[0:16, 0:32], C_l[0:32, 0:32], 0, 0, 0, 0))
        for i in S.serial(32, annotations={"tl.parallel": 1}):
            for j in S.serial(32, annotations={"tl.parallel": 1}):
                C_l[i, j] = C_l[i, j] * S.float32(2.0)
        S.evaluate(_tile("tl.copy", C_l[0:32, 0:32], C[0:32, 0:32]))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((32, 64), "float16"), B: S.Buffer((64, 32), "float16"),
                 C: S.Buffer((32, 32), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_acc = S.alloc_buffer((32,), "float32", scope="local")
        for r in S.unroll(32):
            C_acc[r] = S.float32(0.0)
        for k in S.serial(4):
            S.evaluate(_tile("tl.copy", A[0:32, k * 16:k * 16 + 16], A_s[0:32, 0:16]))
            S.evaluate(_tile("tl.copy", B[k * 16:k * 16 + 16, 0:32], B_s[0:16, 0:32]))
            # C's registers, then the layout: M, N, warps along M and N, policy
            S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], B_s[0:16, 0:32], C_acc[0:32], 0, 0, 0, 0,
                             32, 32, 1, 1, 0))
        for r in S.unroll(32):
            C_acc[r] = C_acc[r] * S.float32(2.0)
        for r in S.unroll(32):  # register r of lane tx: row r//16*16 + lane//4 + (r//2)%2*8, col (r//4)%4*8 + ...
            if r // 4 // 4 * 16 + tx % 32 // 4 + r // 2 % 2 * 8 < 32:  # one warp column: the columns fit
                C[r // 4 // 4 * 16 + tx % 32 // 4 + r // 2 % 2 * 8,
                  r // 4 % 4 * 8 + tx % 32 % 4 * 2 + r % 2] = C_acc[r]

    assert body_equal(_run(MMAAccumulators, before), expected)


def _mma_kernel(acc_dtype, stray_use):
    @S.prim_func(check_well_formed=False)
    def func(A: S.Buffer((32, 16), "float16"), C: S.Buffer((32, 32), acc_dtype)):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_l = S.alloc_buffer((32, 32), acc_dtype, scope="local.fragment")
        S.evaluate(_tile("tl.fill", C_l[0:32, 0:32], S.cast(0, acc_dtype)))
        S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], B_s[0:16, 0:32], C_l[0:32, 0:32], 0, 0, 0, 0))
        if stray_use:
            C[0, 0] = C_l[3, 5]  # one element read outside tile ops and T.Parallel nests
        S.evaluate(_tile("tl.copy", C_l[0:32, 0:32], C[0:32, 0:32]))

    return func


@pytest.mark.parametrize("acc_dtype,stray_use,arch", [("float32", False, "sm_80"), ("float32", True, "sm_80"),
                                                      ("float16", False, "sm_80"), ("float32", False, "sm_75")],
                         ids=["rewritten", "unhandled_use", "fp16_accumulator", "pre_sm80"])
def test_mma_accumulators_leave_fragments_they_cannot_serve(acc_dtype, stray_use, arch):
    """An element use the pass does not understand, a C dtype no MMA kind accumulates in, an arch below sm_80:
    the fragment stays on core's generic path (the first case, which the pass does take, shows the kernel is
    otherwise eligible)."""
    func = _mma_kernel(acc_dtype, stray_use)
    after = _run(MMAAccumulators, func, arch)
    assert body_equal(after, func) == (arch == "sm_75" or stray_use or acc_dtype == "float16")


# ----------------------------------------------------------------------------- cuda.mark_pipeline_stages
def _pipelined_kernel(annotations):
    @S.prim_func(check_well_formed=False)
    def func(A: S.Buffer((32, 64), "float16"), B: S.Buffer((64, 32), "float16"), V: S.Buffer((64, 32), "float16")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_acc = S.alloc_buffer((32,), "float32", scope="local")
        for k in S.serial(4, annotations=annotations):
            S.evaluate(_tile("tl.copy", A[0:32, k * 16:k * 16 + 16], A_s[0:32, 0:16]))
            S.evaluate(_tile("tl.copy", B[k * 16:k * 16 + 16, 0:32], B_s[0:16, 0:32]))
            S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], B_s[0:16, 0:32], C_acc[0:32], 0, 0, 0, 0, 32, 32, 1, 1, 0))
            V_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
            S.evaluate(_tile("tl.copy", V[k * 16:k * 16 + 16, 0:32], V_s[0:16, 0:32]))
            S.evaluate(_tile("tl.copy", A_s[0:16, 0:16], B_s[0:16, 0:16]))  # shared -> shared: no cp.async
            S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], V_s[0:16, 0:32], C_acc[0:32], 0, 0, 0, 0, 32, 32, 1, 1, 0))

    return func


def test_mark_pipeline_stages_tags_producers_and_consumers():
    """Each top-level statement of the pipelined loop gets its role and iteration; the A and B copies form run 0
    (adjacent producers); the declaration stays unmarked and ends the run, so the V copy starts run 4; a copy
    that is not global -> shared is a consumer."""
    before = _pipelined_kernel({"tl.pipeline_stages": 2})

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((32, 64), "float16"), B: S.Buffer((64, 32), "float16"),
                 V: S.Buffer((64, 32), "float16")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 16), "float16", scope="shared.dyn")
        B_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
        C_acc = S.alloc_buffer((32,), "float32", scope="local")
        for k in S.serial(4, annotations={"tl.pipeline_stages": 2}):
            with S.attr(_imm(P + "#0"), P, k):
                S.evaluate(_tile("tl.copy", A[0:32, k * 16:k * 16 + 16], A_s[0:32, 0:16]))
            with S.attr(_imm(P + "#0"), P, k):
                S.evaluate(_tile("tl.copy", B[k * 16:k * 16 + 16, 0:32], B_s[0:16, 0:32]))
            with S.attr(_imm(Q), Q, k):
                S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], B_s[0:16, 0:32], C_acc[0:32], 0, 0, 0, 0,
                                 32, 32, 1, 1, 0))
            V_s = S.alloc_buffer((16, 32), "float16", scope="shared.dyn")
            with S.attr(_imm(P + "#4"), P, k):
                S.evaluate(_tile("tl.copy", V[k * 16:k * 16 + 16, 0:32], V_s[0:16, 0:32]))
            with S.attr(_imm(Q), Q, k):
                S.evaluate(_tile("tl.copy", A_s[0:16, 0:16], B_s[0:16, 0:16]))
            with S.attr(_imm(Q), Q, k):
                S.evaluate(_tile("tl.gemm", A_s[0:32, 0:16], V_s[0:16, 0:32], C_acc[0:32], 0, 0, 0, 0,
                                 32, 32, 1, 1, 0))

    assert body_equal(_run(MarkPipelineStages, before), expected)


@pytest.mark.parametrize("annotations,arch", [({}, "sm_80"), ({"tl.pipeline_stages": 2}, "sm_75")],
                         ids=["not_pipelined", "pre_sm80"])
def test_mark_pipeline_stages_leaves_plain_loops_and_old_archs(annotations, arch):
    """A loop without pipeline annotations, or an arch without cp.async, stays unmarked."""
    func = _pipelined_kernel(annotations)
    assert body_equal(_run(MarkPipelineStages, func, arch), func)


# ----------------------------------------------------------------------------- cuda.async_copy_pipeline
def _cp_async(A_s, offset, src):
    """One thread's 16-byte ``cp.async`` of a lowered ``tl.copy`` (global -> shared)."""
    ptr = tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation("float16"), A_s.data, offset, 8, 2)
    return tirx.call_extern("void", "tl_cp_async16", ptr, src, 16)


def test_async_copy_pipeline_commits_per_stage_and_waits_for_one_group():
    """A two-stage pipeline after expansion: prologue copy of iteration 0, a steady loop (copy k + 1, consume k),
    the last consumer. Producers lose their ``wait_group 0`` and trailing barrier; the steady loop's producer keeps
    its leading barrier (the previous consumer read the version it overwrites); consumer k waits with
    ``wait_group 1`` (copy k + 1 stays in flight), the last one with ``wait_group 0``; the markers are removed."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 8), "float16"), B: S.Buffer((128, 8), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((2, 32, 8), "float16", scope="shared.dyn")
        with S.attr(_imm(P + "#0"), P, 0):
            S.evaluate(_sync())
            S.evaluate(_cp_async(A_s, tx * 8, S.address_of(A[tx, 0])))
            S.call_extern("void", "tl_cp_async_commit")
            S.call_extern("void", "tl_cp_async_wait_group", 0)
            S.evaluate(_sync())
        for k in range(3):
            with S.attr(_imm(P + "#0"), P, k + 1):
                S.evaluate(_sync())
                S.evaluate(_cp_async(A_s, ((k + 1) % 2 * 32 + tx) * 8, S.address_of(A[k * 32 + 32 + tx, 0])))
                S.call_extern("void", "tl_cp_async_commit")
                S.call_extern("void", "tl_cp_async_wait_group", 0)
                S.evaluate(_sync())
            with S.attr(_imm(Q), Q, k):
                for v in S.vectorized(8):
                    B[k * 32 + tx, v] = A_s[k % 2, 31 - tx, v]
        with S.attr(_imm(Q), Q, 3):
            for v in S.vectorized(8):
                B[96 + tx, v] = A_s[1, 31 - tx, v]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 8), "float16"), B: S.Buffer((128, 8), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((2, 32, 8), "float16", scope="shared.dyn")
        S.evaluate(_sync())
        S.evaluate(_cp_async(A_s, tx * 8, S.address_of(A[tx, 0])))
        S.call_extern("void", "tl_cp_async_commit")
        for k in range(3):
            S.evaluate(_sync())
            S.evaluate(_cp_async(A_s, ((k + 1) % 2 * 32 + tx) * 8, S.address_of(A[k * 32 + 32 + tx, 0])))
            S.call_extern("void", "tl_cp_async_commit")
            S.call_extern("void", "tl_cp_async_wait_group", 1)
            S.evaluate(_sync())
            for v in S.vectorized(8):
                B[k * 32 + tx, v] = A_s[k % 2, 31 - tx, v]
        S.call_extern("void", "tl_cp_async_wait_group", 0)
        S.evaluate(_sync())
        for v in S.vectorized(8):
            B[96 + tx, v] = A_s[1, 31 - tx, v]

    assert body_equal(_run(AsyncCopyPipeline, before), expected)


def test_async_copy_pipeline_leaves_unmarked_copies_waiting():
    """Without pipeline markers (a copy outside ``T.Pipelined``) the copy keeps its immediate wait."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((32, 8), "float16"), B: S.Buffer((32, 8), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 8), "float16", scope="shared.dyn")
        S.evaluate(_sync())
        S.evaluate(_cp_async(A_s, tx * 8, S.address_of(A[tx, 0])))
        S.call_extern("void", "tl_cp_async_commit")
        S.call_extern("void", "tl_cp_async_wait_group", 0)
        S.evaluate(_sync())
        for v in S.vectorized(8):
            B[tx, v] = A_s[31 - tx, v]

    assert body_equal(_run(AsyncCopyPipeline, before), before)


def test_async_copy_pipeline_keeps_commits_outside_runtime_guards():
    """A runtime trip count: core guards the copies of iterations past the end (``k + 1 < n``). The copies stay
    under their guard, now marked ``tvm_thread_invariant`` (it reads no thread index), the commits move out of it
    so every iteration commits one group (an empty one at the end) and ``wait_group 1`` stays exact."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 8), "float16"), B: S.Buffer((128, 8), "float16"), n: S.int32):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((2, 32, 8), "float16", scope="shared.dyn")
        if 0 < n:
            with S.attr(_imm(P + "#0"), P, 0):
                S.evaluate(_sync())
                S.evaluate(_cp_async(A_s, tx * 8, S.address_of(A[tx, 0])))
                S.call_extern("void", "tl_cp_async_commit")
                S.call_extern("void", "tl_cp_async_wait_group", 0)
                S.evaluate(_sync())
        for k in range(n):
            if k + 1 < n:
                with S.attr(_imm(P + "#0"), P, k + 1):
                    S.evaluate(_sync())
                    S.evaluate(_cp_async(A_s, ((k + 1) % 2 * 32 + tx) * 8, S.address_of(A[k * 32 + 32 + tx, 0])))
                    S.call_extern("void", "tl_cp_async_commit")
                    S.call_extern("void", "tl_cp_async_wait_group", 0)
                    S.evaluate(_sync())
            with S.attr(_imm(Q), Q, k):
                for v in S.vectorized(8):
                    B[k * 32 + tx, v] = A_s[k % 2, 31 - tx, v]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 8), "float16"), B: S.Buffer((128, 8), "float16"), n: S.int32):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((2, 32, 8), "float16", scope="shared.dyn")
        if S.tvm_thread_invariant(0 < n):
            S.evaluate(_sync())
            S.evaluate(_cp_async(A_s, tx * 8, S.address_of(A[tx, 0])))
        S.call_extern("void", "tl_cp_async_commit")
        for k in range(n):
            if S.tvm_thread_invariant(k + 1 < n):
                S.evaluate(_sync())
                S.evaluate(_cp_async(A_s, ((k + 1) % 2 * 32 + tx) * 8, S.address_of(A[k * 32 + 32 + tx, 0])))
            S.call_extern("void", "tl_cp_async_commit")
            S.call_extern("void", "tl_cp_async_wait_group", 1)
            S.evaluate(_sync())
            for v in S.vectorized(8):
                B[k * 32 + tx, v] = A_s[k % 2, 31 - tx, v]

    assert body_equal(_run(AsyncCopyPipeline, before), expected)


# ----------------------------------------------------------------------------- cuda.swizzle_shared_operands
def _ptr(buf, offset, extent, rw):
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation("float16"), buf.data, offset,
                            extent, rw)


def test_swizzle_shared_operands_xor_swizzles_an_ldmatrix_tile():
    """A 32x64 fp16 tile (8 chunks of 8 elements a row) that ``ldmatrix`` reads: chunk ``c`` of row ``r`` moves to
    ``c ^ (r % 8)`` in every access -- the cp.async destinations and the ldmatrix source (pointer offsets split
    into row and column), and element stores. The tile nobody reads with ldmatrix keeps its layout."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((32, 64), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 64), "float16", scope="shared.dyn")
        O_s = S.alloc_buffer((32, 64), "float16", scope="shared.dyn")
        frag = S.alloc_buffer((4,), "uint32", scope="local")
        for i in S.unroll(8):
            S.call_extern("void", "tl_cp_async16", _ptr(A_s, (i * 32 + tx) * 8, 8, 2),
                          S.address_of(A[(i * 32 + tx) // 8, (i * 32 + tx) % 8 * 8]), 16)
        A_s[tx, 3] = S.float16(0)
        O_s[tx, 3] = A_s[tx, 11]
        S.call_extern("void", "tl_ldmatrix_x4", S.address_of(frag[0]), _ptr(A_s, tx * 64 + 8, 8, 1))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((32, 64), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((32, 64), "float16", scope="shared.dyn")
        O_s = S.alloc_buffer((32, 64), "float16", scope="shared.dyn")
        frag = S.alloc_buffer((4,), "uint32", scope="local")
        for i in S.unroll(8):
            S.call_extern("void", "tl_cp_async16", _ptr(
                A_s, (i * 32 + tx) * 8 // 64 * 64 + (((i * 32 + tx) * 8 % 64 // 8 ^ (i * 32 + tx) * 8 // 64 % 8) * 8
                                                     + (i * 32 + tx) * 8 % 64 % 8), 8, 2),
                S.address_of(A[(i * 32 + tx) // 8, (i * 32 + tx) % 8 * 8]), 16)
        A_s[tx, (0 ^ tx % 8) * 8 + 3] = S.float16(0)
        O_s[tx, 3] = A_s[tx, (1 ^ tx % 8) * 8 + 3]
        S.call_extern("void", "tl_ldmatrix_x4", S.address_of(frag[0]), _ptr(
            A_s, (tx * 64 + 8) // 64 * 64 + (((tx * 64 + 8) % 64 // 8 ^ (tx * 64 + 8) // 64 % 8) * 8
                                             + (tx * 64 + 8) % 64 % 8), 8, 1))

    assert body_equal(_run(SwizzleSharedOperands, before), expected)


def _untyped_ptr(buf, offset, extent, rw):
    """`_ptr` with the data pointer as the pass builds it for a re-declared tile: ``buffer_data`` typed plain
    ``handle`` (``buf.data`` is typed ``handle("float16", "shared.dyn")``; nothing downstream reads that type)."""
    data = tirx.call_intrin("handle", "tirx.buffer_data", buf)
    return tirx.call_intrin("handle", "tirx.tvm_access_ptr", tirx.type_annotation("float16"), data, offset, extent, rw)


def test_swizzle_shared_operands_gives_wgmma_descriptor_tiles_the_hardware_layout():
    """A 64x128 fp16 tile a swizzled wgmma descriptor reads (sm_90a): 256-byte rows become two 128-byte column
    blocks, the tile is re-declared ``[2, 64, 64]`` and every access goes to ``[c // 64, r, swizzled c % 64]``; in
    such kernels every ``shared.dyn`` tile is padded to a multiple of 1024 bytes (``X_s``: 3x8 fp32 -> 32x8)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 128), "float16"), D: S.Buffer((64,), "uint64")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        A_s = S.alloc_buffer((64, 128), "float16", scope="shared.dyn")
        X_s = S.alloc_buffer((3, 8), "float32", scope="shared.dyn")
        for c in range(128):
            A_s[tx, c] = A[tx, c]
        X_s[0, 0] = S.float32(1)
        D[tx] = S.call_extern("uint64", "tl_wgmma_desc_sw", _ptr(A_s, tx // 8 * 1024 + 64, 1, 1), 16, 1024, 1)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 128), "float16"), D: S.Buffer((64,), "uint64")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        A_s = S.alloc_buffer((2, 64, 64), "float16", scope="shared.dyn")
        X_s = S.alloc_buffer((32, 8), "float32", scope="shared.dyn")
        for c in range(128):
            A_s[c // 64, tx, (c % 64 // 8 ^ tx % 8) * 8 + c % 64 % 8] = A[tx, c]
        X_s[0, 0] = S.float32(1)
        # flat offset o -> block (o % 128) // 64, row (o // 128) % 64, chunk ((o % 128 % 64) // 8) ^ (row % 8)
        D[tx] = S.call_extern("uint64", "tl_wgmma_desc_sw", _untyped_ptr(
            A_s, (tx // 8 * 1024 + 64) // 8192 * 8192 + ((tx // 8 * 1024 + 64) % 128 // 64 * 4096
                                                         + (tx // 8 * 1024 + 64) // 128 % 64 * 64
                                                         + ((tx // 8 * 1024 + 64) % 128 % 64 // 8
                                                            ^ (tx // 8 * 1024 + 64) // 128 % 64 % 8) * 8
                                                         + (tx // 8 * 1024 + 64) % 128 % 64 % 8), 1, 1),
            16, 1024, 1)

    assert body_equal(_run(SwizzleSharedOperands, before, "sm_90a"), expected)


def _ldmatrix_tile(rows, pre_swizzled, whole_tile_ptr):
    @S.prim_func(check_well_formed=False)
    def func(A: S.Buffer((32, 64), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 32)
        A_s = S.alloc_buffer((rows, 64), "float16", scope="shared.dyn")
        frag = S.alloc_buffer((4,), "uint32", scope="local")
        if pre_swizzled:
            A_s[tx % rows, (tx // 8 ^ tx % 8) * 8] = A[tx, 0]  # a layout the user annotated, which core applied
        else:
            A_s[tx % rows, 8] = A[tx, 0]
        if whole_tile_ptr:  # a use the pass cannot follow: a pointer to the whole tile
            S.call_extern("void", "consume_tile", _ptr(A_s, 0, rows * 64, 1))
        S.call_extern("void", "tl_ldmatrix_x4", S.address_of(frag[0]), _ptr(A_s, tx % rows * 64 + 8, 8, 1))

    return func


@pytest.mark.parametrize("rows,pre_swizzled,whole_tile_ptr,rewritten", [
    (32, False, False, True), (32, True, False, False), (32, False, True, False), (20, False, False, False)],
    ids=["rewritten", "pre_swizzled", "whole_tile_pointer", "rows_not_multiple_of_8"])
def test_swizzle_shared_operands_leaves_tiles_it_cannot_rewrite(rows, pre_swizzled, whole_tile_ptr, rewritten):
    """Indices that already XOR, a pointer spanning more than one chunk, a row count that is not a multiple of 8:
    the tile keeps its layout (the first case, which the pass does swizzle, shows the kernel is otherwise
    eligible)."""
    func = _ldmatrix_tile(rows, pre_swizzled, whole_tile_ptr)
    assert body_equal(_run(SwizzleSharedOperands, func), func) == (not rewritten)


# ----------------------------------------------------------------------------- cuda.share_scratch_tiles
def _scratch_kernel(n):
    """Three scratch tiles of one ``n x n`` fp16 shape (two in a loop, one after it) and one of another shape."""

    @S.prim_func(check_well_formed=False)
    def func(A: S.Buffer((128, 128), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        for k in range(2):
            s0 = S.alloc_buffer((n, n), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
            s0[tx % n, 0] = A[tx, k]
            A[tx, k] = s0[n - 1 - tx % n, 0]
            s1 = S.alloc_buffer((n, n), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
            s1[tx % n, 1] = A[tx, k]
            A[tx, k] = s1[n - 1 - tx % n, 1]
        s2 = S.alloc_buffer((n, n), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
        s2[tx % n, 0] = A[tx, 2]
        A[tx, 2] = s2[n - 1 - tx % n, 0]
        s3 = S.alloc_buffer((8, n), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
        s3[0, tx % n] = A[tx, 3]
        A[tx, 3] = s3[0, n - 1 - tx % n]

    return func


def test_share_scratch_tiles_merges_same_shaped_tiles_past_the_static_limit():
    """Three 32 KiB static scratch tiles (96 KiB > 48 KiB of static shared memory) become one, allocated at the
    front of the innermost sequence holding all their uses; the tile of another shape stays where it was."""

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 128), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        s0 = S.alloc_buffer((128, 128), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
        for k in range(2):
            s0[tx % 128, 0] = A[tx, k]
            A[tx, k] = s0[127 - tx % 128, 0]
            s0[tx % 128, 1] = A[tx, k]
            A[tx, k] = s0[127 - tx % 128, 1]
        s0[tx % 128, 0] = A[tx, 2]
        A[tx, 2] = s0[127 - tx % 128, 0]
        s3 = S.alloc_buffer((8, 128), "float16", scope="shared", annotations={"tl.cuda.scratch": 1})
        s3[0, tx % 128] = A[tx, 3]
        A[tx, 3] = s3[0, 127 - tx % 128]

    assert body_equal(_run(ShareScratchTiles, _scratch_kernel(128)), expected)


def test_share_scratch_tiles_leaves_kernels_that_fit():
    """Three 2 KiB scratch tiles fit every limit: the kernel keeps its allocations."""
    func = _scratch_kernel(32)
    assert body_equal(_run(ShareScratchTiles, func), func)
