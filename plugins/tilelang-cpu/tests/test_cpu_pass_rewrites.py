"""Before / Expected tests of the CPU plugin's passes (`tilelang_cpu.pipeline.PASSES`), each pass run alone on a
TVMScript ``before`` written as the IR looks at the pass's extension point, compared with an ``expected``
PrimFunc by structural equality, plus the cases each pass must leave alone:

- ``cpu.elide_tile_copies`` (pre_layout): input / output tiles read and written in place, gemm A read in place,
  a clearing gemm's accumulator is the output; kept for a converting copy, a tile overhanging its tensor, an
  output read elsewhere, an accumulator not cleared by its gemm / cast / partly copied / read after its copy /
  copied to the same place by every block, the config switched off;
- ``cpu.merge_gemm_k_steps`` (pre_layout): K steps merged into longer ones; one step: no loop, the clear folded
  into the gemm, the accumulator then the output; kept when the accumulator is cleared each step or the target
  pipelines in software;
- ``cpu.lower_launch`` (post_storage): block grid -> one parallel loop, shared -> global, threads emulated by
  loops split at a barrier (printed script lines: see that test), row streaming; a function without a launch is
  left alone; the split thread loops are SSA (each binds its own thread variable);
- ``cpu.vector_exp`` (post_storage): float32 ``exp2`` / ``exp`` expanded; float64 and bfloat16 arguments kept;
- ``cpu.lower_loop_exits`` (post_storage): ``break`` / ``continue`` of ``for`` and ``while`` loops as flags;
- ``cpu.tighten_guarded_loops`` (post_barriers): guard bounds become the loop range; impure guards kept.

Tile operators (``tl.copy``, ``tl.gemm``, ...) have no TVMScript spelling the parser accepts (``T.tl.copy`` is
printed, not parsed; ``T.call_intrin`` refuses region arguments), so the scripts build them with `_tl`, a Python
call evaluated while the script is parsed.
"""

from __future__ import annotations

import pytest
import tvm
from tvm.script import tirx as S

from tilelang.ir.ops import tile_call
from tilelang.transform.config import tl_configs

LLVM = {"kind": "llvm"}


def body_equal(a, b):
    import tvm_ffi

    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal


def _tl(name, *args):
    """``tl.<name>(*args)``, the tile-operator call, inside a TVMScript function (see the module docstring)."""
    return tile_call("tl." + name, args)


def _run(factory, func, target=LLVM):
    return factory(target)(tvm.IRModule({"main": func}))


# ------------------------------------------------------------------------------------------- cpu.elide_tile_copies
def _elide(func, target=LLVM):
    from tilelang_cpu.passes.elide_tile_copies import ElideTileCopies

    return _run(ElideTileCopies, func, target)


def test_elide_tile_copies_reads_and_writes_global_memory_in_place():
    """Both tiles go: the copy and the allocation become ``evaluate(0)``, tile accesses the tensor at the corner."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 64), "float32"), C: S.Buffer((64, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((32, 32), scope="shared.dyn")
        C_local = S.alloc_buffer((32, 32), scope="local.fragment")
        S.evaluate(_tl("copy", A[by * 32:by * 32 + 32, bx * 32:bx * 32 + 32], A_shared[0:32, 0:32]))
        for i in S.parallel(32, annotations={"tl.parallel": 1}):
            for j in S.parallel(32, annotations={"tl.parallel": 1}):
                C_local[i, j] = A_shared[i, j] * S.float32(2.0)
        S.evaluate(_tl("copy", C_local[0:32, 0:32], C[by * 32:by * 32 + 32, bx * 32:bx * 32 + 32]))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 64), "float32"), C: S.Buffer((64, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        S.evaluate(0)
        S.evaluate(0)
        S.evaluate(0)
        for i in S.parallel(32, annotations={"tl.parallel": 1}):
            for j in S.parallel(32, annotations={"tl.parallel": 1}):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] * S.float32(2.0)
        S.evaluate(0)

    assert body_equal(_elide(before), expected)


def test_elide_tile_copies_reads_gemm_a_in_place():
    """The gemm's A tile becomes the A region; B stays a tile while the micro-kernel does not pack B."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 32), "float32"), B: S.Buffer((32, 64), "float32"),
               C: S.Buffer((128, 64), "float32")):
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 32), scope="shared.dyn")
        B_shared = S.alloc_buffer((32, 64), scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tl("fill", C_local[0:64, 0:64], S.float32(0.0)))
        S.evaluate(_tl("copy", A[by * 64:by * 64 + 64, 0:32], A_shared[0:64, 0:32]))
        S.evaluate(_tl("copy", B[0:32, 0:64], B_shared[0:32, 0:64]))
        S.evaluate(_tl("gemm", A_shared[0:64, 0:32], B_shared[0:32, 0:64], C_local[0:64, 0:64], 0, 0, 0, 0))
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            for j in S.parallel(64, annotations={"tl.parallel": 1}):
                C[by * 64 + i, j] = C_local[i, j]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 32), "float32"), B: S.Buffer((32, 64), "float32"),
                 C: S.Buffer((128, 64), "float32")):
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        S.evaluate(0)
        B_shared = S.alloc_buffer((32, 64), scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tl("fill", C_local[0:64, 0:64], S.float32(0.0)))
        S.evaluate(0)
        S.evaluate(_tl("copy", B[0:32, 0:64], B_shared[0:32, 0:64]))
        S.evaluate(_tl("gemm", A[by * 64:by * 64 + 64, 0:32], B_shared[0:32, 0:64], C_local[0:64, 0:64], 0, 0, 0, 0))
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            for j in S.parallel(64, annotations={"tl.parallel": 1}):
                C[by * 64 + i, j] = C_local[i, j]

    with tl_configs({"tl.cpu.gemm_pack_b": False}):
        after = _elide(before)
    assert body_equal(after, expected)


@S.prim_func(check_well_formed=False)
def _converting_copy(A: S.Buffer((64, 64), "float16"), C: S.Buffer((64, 64), "float32")):
    bx = S.launch_thread("blockIdx.x", 2)
    S.launch_thread("threadIdx.x", 128)
    A_shared = S.alloc_buffer((64, 32), scope="shared.dyn")
    S.evaluate(_tl("copy", A[0:64, bx * 32:bx * 32 + 32], A_shared[0:64, 0:32]))
    for i in S.parallel(64, annotations={"tl.parallel": 1}):
        for j in S.parallel(32, annotations={"tl.parallel": 1}):
            C[i, bx * 32 + j] = S.Cast("float32", A_shared[i, j])


@S.prim_func(check_well_formed=False)
def _overhanging_tile(A: S.Buffer((100,), "float32"), C: S.Buffer((100,), "float32")):
    bx = S.launch_thread("blockIdx.x", 4)
    S.launch_thread("threadIdx.x", 32)
    A_shared = S.alloc_buffer((32,), scope="shared.dyn")
    S.evaluate(_tl("copy", A[bx * 32:bx * 32 + 32], A_shared[0:32]))
    for j in S.parallel(32, annotations={"tl.parallel": 1}):
        if bx * 32 + j < 100:
            C[bx * 32 + j] = A_shared[j]


@S.prim_func(check_well_formed=False)
def _output_read_elsewhere(A: S.Buffer((64,), "float32"), C: S.Buffer((64,), "float32")):
    bx = S.launch_thread("blockIdx.x", 2)
    S.launch_thread("threadIdx.x", 32)
    C_local = S.alloc_buffer((32,), scope="local.fragment")
    for j in S.parallel(32, annotations={"tl.parallel": 1}):
        C_local[j] = A[bx * 32 + j] + C[bx * 32 + j]
    S.evaluate(_tl("copy", C_local[0:32], C[bx * 32:bx * 32 + 32]))


def _accumulator(clear_accum=1, dtype="float32", rows=64, read_after=False, block_row=True):
    """``T.gemm(A, B, C_local, clear_accum)`` then ``T.copy(C_local[0:rows], C[...])`` (C of `dtype`), over a
    grid of two blocks (each its own rows of C unless not `block_row`); `read_after`: C_local also read after
    the copy."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 32), "float32"), B: S.Buffer((32, 64), "float32"), C: S.Buffer((128, 64), dtype),
               D: S.Buffer((128, 64), "float32")):
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tl("gemm", A[by * 64:by * 64 + 64, 0:32], B[0:32, 0:64], C_local[0:64, 0:64], 0, 0, 0,
                       clear_accum))
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            for j in S.parallel(64, annotations={"tl.parallel": 1}):
                C_local[i, j] = S.max(C_local[i, j], S.float32(0.0))
        S.evaluate(_tl("copy", C_local[0:rows, 0:64], C[by * 64 * block_row:by * 64 * block_row + rows, 0:64]))
        if read_after:
            for i in S.parallel(64, annotations={"tl.parallel": 1}):
                for j in S.parallel(64, annotations={"tl.parallel": 1}):
                    D[by * 64 + i, j] = C_local[i, j]

    return before


def test_elide_tile_copies_accumulates_a_clearing_gemm_into_the_output():
    """A gemm that clears the whole accumulator, an epilogue on it, its whole copy out: the gemm writes C and
    the epilogue runs on C."""

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 32), "float32"), B: S.Buffer((32, 64), "float32"),
                 C: S.Buffer((128, 64), "float32"), D: S.Buffer((128, 64), "float32")):
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 128)
        S.evaluate(0)
        S.evaluate(_tl("gemm", A[by * 64:by * 64 + 64, 0:32], B[0:32, 0:64], C[by * 64:by * 64 + 64, 0:64], 0, 0,
                       0, 1))
        for i in S.parallel(64, annotations={"tl.parallel": 1}):
            for j in S.parallel(64, annotations={"tl.parallel": 1}):
                C[by * 64 + i, j] = S.max(C[by * 64 + i, j], S.float32(0.0))
        S.evaluate(0)

    assert body_equal(_elide(_accumulator()), expected)


@pytest.mark.parametrize("before", [_converting_copy, _overhanging_tile, _output_read_elsewhere,
                                    _accumulator(clear_accum=0), _accumulator(dtype="float16"),
                                    _accumulator(rows=32), _accumulator(read_after=True),
                                    _accumulator(block_row=False)],
                         ids=["converting_copy", "overhanging_tile", "output_read_elsewhere",
                              "accumulator_not_cleared", "accumulator_cast", "accumulator_partial_copy",
                              "accumulator_read_after_copy", "accumulator_shared_by_blocks"])
def test_elide_tile_copies_keeps_copies_it_cannot_elide(before):
    assert body_equal(_elide(before), before)


def test_elide_tile_copies_is_off_by_config():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32"), C: S.Buffer((64,), "float32")):
        bx = S.launch_thread("blockIdx.x", 2)
        S.launch_thread("threadIdx.x", 32)
        A_shared = S.alloc_buffer((32,), scope="shared.dyn")
        S.evaluate(_tl("copy", A[bx * 32:bx * 32 + 32], A_shared[0:32]))
        for j in S.parallel(32, annotations={"tl.parallel": 1}):
            C[bx * 32 + j] = A_shared[j]

    with tl_configs({"tl.cpu.elide_copies": False}):
        after = _elide(before)
    assert body_equal(after, before)
    assert not body_equal(_elide(before), before)  # the same kernel is rewritten with the config on


# ----------------------------------------------------------------------------------------- cpu.merge_gemm_k_steps
def _merge(func, target=LLVM, k_block=64):
    from tilelang_cpu.passes.merge_gemm_k_steps import MergeGemmKSteps

    with tl_configs({"tl.cpu.gemm_k_block": k_block}):  # the ISA's default K block depends on the machine
        return _run(MergeGemmKSteps, func, target)


def _k_loop(clear_accum, fill=0.0):
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 128), "float32"), B: S.Buffer((128, 64), "float32"),
               C: S.Buffer((64, 64), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 32), scope="shared.dyn")
        B_shared = S.alloc_buffer((32, 64), scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tl("fill", C_local[0:64, 0:64], S.float32(fill)))
        for k in S.serial(4, annotations={"tl.pipeline_stages": 2}):
            S.evaluate(_tl("copy", A[0:64, k * 32:k * 32 + 32], A_shared[0:64, 0:32]))
            S.evaluate(_tl("copy", B[k * 32:k * 32 + 32, 0:64], B_shared[0:32, 0:64]))
            S.evaluate(_tl("gemm", A_shared[0:64, 0:32], B_shared[0:32, 0:64], C_local[0:64, 0:64],
                           0, 0, 0, clear_accum))
        S.evaluate(_tl("copy", C_local[0:64, 0:64], C[0:64, 0:64]))

    return before


def test_merge_gemm_k_steps_widens_tiles_and_halves_the_loop():
    """K block 64 over steps of 32: two steps per iteration, both tiles twice as long along K."""

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 128), "float32"), B: S.Buffer((128, 64), "float32"),
                 C: S.Buffer((64, 64), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 64), scope="shared.dyn")
        B_shared = S.alloc_buffer((64, 64), scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tl("fill", C_local[0:64, 0:64], S.float32(0.0)))
        for k_o in range(2):
            S.evaluate(_tl("copy", A[0:64, k_o * 2 * 32:k_o * 2 * 32 + 64], A_shared[0:64, 0:64]))
            S.evaluate(_tl("copy", B[k_o * 2 * 32:k_o * 2 * 32 + 64, 0:64], B_shared[0:64, 0:64]))
            S.evaluate(_tl("gemm", A_shared[0:64, 0:64], B_shared[0:64, 0:64], C_local[0:64, 0:64], 0, 0, 0, 0))
        S.evaluate(_tl("copy", C_local[0:64, 0:64], C[0:64, 0:64]))

    assert body_equal(_merge(_k_loop(0)), expected)


def test_merge_gemm_k_steps_to_one_step_clears_in_the_gemm_and_accumulates_into_the_output():
    """K block 128 over four steps of 32: one step, so no loop; the clear folds into the gemm (``clear_accum``),
    and the accumulator, now written once by that gemm and copied out whole, is the output (C) itself."""

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 128), "float32"), B: S.Buffer((128, 64), "float32"),
                 C: S.Buffer((64, 64), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 128), scope="shared.dyn")
        B_shared = S.alloc_buffer((128, 64), scope="shared.dyn")
        S.evaluate(0)
        S.evaluate(_tl("copy", A[0:64, 0:128], A_shared[0:64, 0:128]))
        S.evaluate(_tl("copy", B[0:128, 0:64], B_shared[0:128, 0:64]))
        S.evaluate(_tl("gemm", A_shared[0:64, 0:128], B_shared[0:128, 0:64], C[0:64, 0:64], 0, 0, 0, 1))
        S.evaluate(0)

    assert body_equal(_merge(_k_loop(0), k_block=128), expected)
    from tilelang.transform import utils as C
    from tilelang_cpu.passes.merge_gemm_k_steps import MergeGemmKSteps

    with tl_configs({"tl.cpu.gemm_k_block": 128, "tl.cpu.elide_copies": False}):
        after = _run(MergeGemmKSteps, _k_loop(0))  # the clear still folds into the gemm; the accumulator stays
    assert "C_local" in {str(a.buffer.name) for a in C.allocations(after["main"].body)}
    assert "tl.fill" not in str(after) and "C_local[0:64, 0:64], 0, 0, 0, 1)" in str(after)
    for fill in (1.0, -0.0):  # not a clear (-0.0: the sign of an all -0.0 sum would change): kept, and the tile
        after = _merge(_k_loop(0, fill), k_block=128)
        assert "tl.fill" in str(after) and "C_local[0:64, 0:64], 0, 0, 0, 0)" in str(after)


def test_merge_gemm_k_steps_keeps_a_loop_that_clears_the_accumulator():
    before = _k_loop(1)
    assert body_equal(_merge(before), before)


def test_merge_gemm_k_steps_keeps_loops_on_software_pipelined_targets(monkeypatch):
    from tilelang.transform import utils as transform_utils

    before = _k_loop(0)
    monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: {"software_pipeline": True})
    assert body_equal(_merge(before), before)


# ----------------------------------------------------------------------------------------------- cpu.lower_launch
def _lower_launch(func):
    from tilelang_cpu.passes.lower_launch import LowerLaunchToCPU

    return _run(LowerLaunchToCPU, func)


def test_lower_launch_grid_becomes_one_parallel_loop_with_global_tiles():
    """x is the fastest block index; the shared tile becomes a global (per-block) buffer; the unused thread
    index disappears."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 4)
        by = S.launch_thread("blockIdx.y", 2)
        S.launch_thread("threadIdx.x", 32)
        T_sh = S.alloc_buffer((16,), scope="shared")
        for i in range(32):
            for j in range(16):
                T_sh[j] = A[by * 32 + i, bx * 16 + j]
            for j in range(16):
                A[by * 32 + i, bx * 16 + j] = T_sh[15 - j]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64, 64), "float32")):
        for block in S.parallel(8):
            T_sh = S.alloc_buffer((16,))
            for i in range(32):
                for j in range(16):
                    T_sh[j] = A[block // 4 * 32 + i, block % 4 * 16 + j]
                for j in range(16):
                    A[block // 4 * 32 + i, block % 4 * 16 + j] = T_sh[15 - j]

    assert body_equal(_lower_launch(before), expected)


@S.prim_func(check_well_formed=False)
def _threads_with_barrier(A: S.Buffer((8, 4), "float32")):
    bx = S.launch_thread("blockIdx.x", 8)
    tx = S.launch_thread("threadIdx.x", 4)
    Sh = S.alloc_buffer((4,), scope="shared")
    r = S.alloc_buffer((1,), scope="local")
    r[0] = A[bx, tx] * S.float32(2)
    Sh[tx] = r[0]
    S.tvm_storage_sync("shared")
    A[bx, tx] = Sh[3 - tx] + r[0]


def test_lower_launch_emulates_threads_split_at_the_barrier():
    """Thread code runs in ``for tx`` loops split at the barrier (dropped); the per-thread ``local`` buffer gets a
    thread dimension; small buffers become global (stack) ones.

    Compared as printed script lines: both thread loops bind the SAME variable ``tx`` (the launch's), which
    TVMScript cannot write (each ``for`` there binds a fresh variable), so no Expected PrimFunc is structurally
    equal to the result.
    """
    text = _lower_launch(_threads_with_barrier)["main"].script().splitlines()
    body = text[next(i for i, line in enumerate(text) if line.startswith("def ")) + 1:]
    assert body == [
        "    for block in T.parallel(8):",
        "        Sh = T.alloc_buffer((4,))",
        "        r = T.alloc_buffer((4, 1))",
        "        for tx in range(4):",
        "            r[tx, 0] = A[block, tx] * T.float32(2.0)",
        "            Sh[tx] = r[tx, 0]",
        "        for tx in range(4):",
        "            A[block, tx] = Sh[3 - tx] + r[tx, 0]",
    ]


def test_lower_launch_thread_loops_are_well_formed():
    """Found while writing these tests: the thread loops split at a barrier all bound the launch's one thread
    variable (TVM's verify_well_formed: 'multiple definitions of variable tx'); each loop now binds its own."""
    after = _lower_launch(_threads_with_barrier)["main"]
    assert tvm.tirx.analysis.verify_well_formed(_threads_with_barrier, assert_mode=False)
    assert tvm.tirx.analysis.verify_well_formed(after, assert_mode=False)


def test_lower_launch_streams_rows_over_the_x_blocks(monkeypatch):
    """One row loop without allocations: the row loop is hoisted over chunks of x blocks (4 chunks per pool
    thread, 1 thread here) and each chunk's columns fused into one loop."""
    monkeypatch.setenv("TILELANG_NUM_THREADS", "1")

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16, 64), "float32")):
        bx = S.launch_thread("blockIdx.x", 8)
        S.launch_thread("threadIdx.x", 32)
        for i in range(16):
            for j in range(8):
                A[i, bx * 8 + j] = A[i, bx * 8 + j] + S.float32(1)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((16, 64), "float32")):
        for block in S.parallel(4):
            for i in range(16):
                for col in range(16):
                    A[i, (block * 2 + col // 8) * 8 + col % 8] = (A[i, (block * 2 + col // 8) * 8 + col % 8]
                                                                  + S.float32(1))

    assert body_equal(_lower_launch(before), expected)


def test_lower_launch_leaves_a_function_without_launch_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        Sh = S.alloc_buffer((8,), scope="shared")
        for i in range(8):
            Sh[i] = A[i]

    assert body_equal(_lower_launch(before), before)


# ------------------------------------------------------------------------------------------------- cpu.vector_exp
def _vector_exp(func):
    from tilelang_cpu.passes.vector_exp import VectorizableExp

    return _run(VectorizableExp, func)


def test_vector_exp_expands_float32_exp2():
    """``2^x``: clamp to [-160, 160], n = rint(x), degree-6 polynomial of x - n, scaled by two powers of two;
    NaN passes through."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = S.exp2(A[i])

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        for i in range(8):
            exp_arg = S.float32()
            exp_x = S.float32()
            exp_rint = S.float32()
            exp_n = S.int32()
            A[i] = S.Let(S.Select(S.isnan(exp_arg), exp_arg, S.Let(S.Let(S.Let(
                ((((((S.float32(0.00015346249870939847) * (exp_x - exp_rint) + S.float32(0.001339993497939538))
                     * (exp_x - exp_rint) + S.float32(0.009618487331182757))
                    * (exp_x - exp_rint) + S.float32(0.05550328765258543))
                   * (exp_x - exp_rint) + S.float32(0.2402264690562616))
                  * (exp_x - exp_rint) + S.float32(0.6931472057445277))
                 * (exp_x - exp_rint) + S.float32(1.00000000055215))
                * S.reinterpret("float32", (exp_n >> 1) + 127 << 23)
                * S.reinterpret("float32", exp_n - (exp_n >> 1) + 127 << 23),
                where={exp_n: S.Cast("int32", exp_rint)}),
                where={exp_rint: S.nearbyint(exp_x)}),
                where={exp_x: S.Select(S.Select(exp_arg < S.float32(-160.0), S.float32(-160.0), exp_arg)
                                       > S.float32(160.0), S.float32(160.0),
                                       S.Select(exp_arg < S.float32(-160.0), S.float32(-160.0), exp_arg))})),
                where={exp_arg: A[i]})

    assert body_equal(_vector_exp(before), expected)


def test_vector_exp_expands_float32_exp():
    """``e^x``: clamp to [-110, 110], n = rint(x * log2 e), Cody-Waite reduction r = x - n ln2_hi - n ln2_lo."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = S.exp(A[i])

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        for i in range(8):
            exp_arg = S.float32()
            exp_x = S.float32()
            exp_rint = S.float32()
            exp_n = S.int32()
            A[i] = S.Let(S.Select(S.isnan(exp_arg), exp_arg, S.Let(S.Let(S.Let(
                ((((((S.float32(0.0013837240881836976)
                      * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                      + S.float32(0.008374818156018413))
                     * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                     + S.float32(0.041668218524769624))
                    * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                    + S.float32(0.1666642013467763))
                   * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                   + S.float32(0.49999992111023456))
                  * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                  + S.float32(1.00000003633368))
                 * (exp_x - exp_rint * S.float32(0.693359375) - exp_rint * S.float32(-2.1219444005469058e-4))
                 + S.float32(1.0000000005521568))
                * S.reinterpret("float32", (exp_n >> 1) + 127 << 23)
                * S.reinterpret("float32", exp_n - (exp_n >> 1) + 127 << 23),
                where={exp_n: S.Cast("int32", exp_rint)}),
                where={exp_rint: S.nearbyint(exp_x * S.float32(1.4426950408889634))}),
                where={exp_x: S.Select(S.Select(exp_arg < S.float32(-110.0), S.float32(-110.0), exp_arg)
                                       > S.float32(110.0), S.float32(110.0),
                                       S.Select(exp_arg < S.float32(-110.0), S.float32(-110.0), exp_arg))})),
                where={exp_arg: A[i]})

    assert body_equal(_vector_exp(before), expected)


def test_vector_exp_keeps_float64_and_bfloat16_arguments():
    """float64 ``exp`` is not float32; a float32 ``exp`` of a bfloat16 load keeps the libm call (see the pass)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float64"), B: S.Buffer((8,), "bfloat16"), C: S.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = S.exp(A[i])
            C[i] = S.exp(S.Cast("float32", B[i]))

    assert body_equal(_vector_exp(before), before)


def test_vector_exp_is_off_by_config():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = S.exp(A[i])

    with tl_configs({"tl.cpu.fast_exp": False}):
        after = _vector_exp(before)
    assert body_equal(after, before)


# ------------------------------------------------------------------------------------------- cpu.lower_loop_exits
def _lower_loop_exits(func):
    from tilelang_cpu.passes.lower_loop_exits import LowerLoopExits

    return _run(LowerLoopExits, func)


def test_lower_loop_exits_for_loop_break_and_continue_become_flags():
    """``S.Break()`` / ``S.Continue()`` are the Break / Continue statements TileLang's frontend emits (a plain
    ``break`` in TVMScript is the ``T.break_loop()`` intrinsic instead)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for i in range(8):
            if A[i] < S.float32(0):
                S.Break()
            if A[i] > S.float32(4):
                S.Continue()
            A[i] = A[i] * S.float32(2)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        loop_break = S.alloc_buffer((1,), "int32", scope="local")
        loop_continue = S.alloc_buffer((1,), "int32", scope="local")
        loop_break[0] = 0
        for i in range(8):
            if loop_break[0] == 0:
                loop_continue[0] = 0
                if A[i] < S.float32(0):
                    loop_break[0] = 1
                    loop_continue[0] = 1
                if loop_break[0] == 0 and loop_continue[0] == 0:
                    if A[i] > S.float32(4):
                        loop_continue[0] = 1
                    if loop_break[0] == 0 and loop_continue[0] == 0:
                        A[i] = A[i] * S.float32(2)

    assert body_equal(_lower_loop_exits(before), expected)


def test_lower_loop_exits_while_loop_stops_at_the_break_flag():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "int32")):
        i = S.alloc_buffer((1,), "int32", scope="local")
        i[0] = 0
        with S.While(i[0] < 8):
            if A[i[0]] == 0:
                S.Break()
            i[0] = i[0] + 1

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "int32")):
        i = S.alloc_buffer((1,), "int32", scope="local")
        i[0] = 0
        loop_break = S.alloc_buffer((1,), "int32", scope="local")
        loop_continue = S.alloc_buffer((1,), "int32", scope="local")
        loop_break[0] = 0
        with S.While(loop_break[0] == 0 and i[0] < 8):
            loop_continue[0] = 0
            if A[i[0]] == 0:
                loop_break[0] = 1
                loop_continue[0] = 1
            if loop_break[0] == 0 and loop_continue[0] == 0:
                i[0] = i[0] + 1

    assert body_equal(_lower_loop_exits(before), expected)


def test_lower_loop_exits_only_touches_the_loop_that_exits():
    """The inner loop's break gets the flags; the outer loop (no exit of its own) stays as it is."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((4, 8), "float32")):
        for r in range(4):
            for i in range(8):
                if A[r, i] < S.float32(0):
                    S.Break()
                A[r, i] = S.float32(1)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 8), "float32")):
        for r in range(4):
            loop_break = S.alloc_buffer((1,), "int32", scope="local")
            loop_continue = S.alloc_buffer((1,), "int32", scope="local")
            loop_break[0] = 0
            for i in range(8):
                if loop_break[0] == 0:
                    loop_continue[0] = 0
                    if A[r, i] < S.float32(0):
                        loop_break[0] = 1
                        loop_continue[0] = 1
                    if loop_break[0] == 0 and loop_continue[0] == 0:
                        A[r, i] = S.float32(1)

    assert body_equal(_lower_loop_exits(before), expected)


def test_lower_loop_exits_leaves_loops_without_exits_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        for i in range(8):
            if A[i] < S.float32(0):
                A[i] = S.float32(0)

    assert body_equal(_lower_loop_exits(before), before)


# -------------------------------------------------------------------------------------- cpu.tighten_guarded_loops
def _tighten(func):
    from tilelang_cpu.passes.tighten_guarded_loops import TightenGuardedLoops

    return _run(TightenGuardedLoops, func)


def test_tighten_guarded_loops_clips_the_range_and_hoists_invariant_guards():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((100,), "float32"), n: S.int32):
        bx = S.launch_thread("blockIdx.x", 4)
        for j in range(32):
            if bx * 32 + j < n and 0 < n:
                A[bx * 32 + j] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((100,), "float32"), n: S.int32):
        bx = S.launch_thread("blockIdx.x", 4)
        if 0 < n:
            for j in range(S.max(S.min(32, n - bx * 32), 0)):
                A[bx * 32 + j] = S.float32(0)

    assert body_equal(_tighten(before), expected)


def test_tighten_guarded_loops_lower_bound_and_remaining_guard():
    """``j >= 4`` raises the start; the impure conjunct (a load) stays as the guard inside the loop."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((32,), "float32")):
        for j in range(32):
            if j >= 4 and A[j] > S.float32(0):
                A[j] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((32,), "float32")):
        for j in range(4, 32):
            if A[j] > S.float32(0):
                A[j] = S.float32(0)

    assert body_equal(_tighten(before), expected)


def test_tighten_guarded_loops_leaves_impure_guards_and_else_branches_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((32,), "float32"), B: S.Buffer((32,), "int32"), n: S.int32):
        for j in range(32):
            if B[0] + j < n:
                A[j] = S.float32(0)
        for j in range(32):
            if j < n:
                A[j] = S.float32(1)
            else:
                A[j] = S.float32(2)

    assert body_equal(_tighten(before), before)
