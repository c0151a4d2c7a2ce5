"""The ``tilelang.language`` surface: reference names, TVM's TIR-script names, backend dialects through the
``tilelang.language`` entry-point group, and the reference's module paths."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

import tilelang.language as T
from tilelang.language import dialects


@pytest.fixture
def fake_dialect(monkeypatch):
    """Install a fake ``tilelang.language`` entry point (dialect ``cuda``) served by an in-memory module."""
    module = types.ModuleType("fake_cuda_dialect")
    module.tma_copy = lambda *args: ("tma_copy", args)
    monkeypatch.setitem(sys.modules, "fake_cuda_dialect", module)
    eps = [dialects.DialectEntryPoint("cuda", "fake_cuda_dialect", "tilelang-fake-cuda", "9.9")]
    monkeypatch.setattr(dialects, "_read_entry_points", lambda: list(eps))
    dialects.reset()
    T.__dict__.pop("tma_copy", None)
    yield eps
    dialects.reset()
    T.__dict__.pop("tma_copy", None)


def test_a_dialect_name_comes_from_the_installed_backend(fake_dialect):
    assert T.tma_copy(1, 2) == ("tma_copy", (1, 2))
    assert dialects.installed_dialects() == ["cuda"]


def test_a_missing_dialect_says_what_to_install(monkeypatch):
    monkeypatch.setattr(dialects, "_read_entry_points", lambda: [])
    dialects.reset()
    T.__dict__.pop("alloc_tmem", None)
    with pytest.raises(AttributeError, match=r"'alloc_tmem': it belongs to the cuda dialect.*tilelang-cuda"):
        getattr(T, "alloc_tmem")  # noqa: B009
    with pytest.raises(AttributeError, match=r"has no attribute 'no_such_name'$"):
        getattr(T, "no_such_name")  # noqa: B009
    dialects.reset()


def test_an_installed_dialect_without_the_name_is_reported(fake_dialect):
    with pytest.raises(AttributeError, match="cuda dialect, which the installed backend does not provide yet"):
        getattr(T, "alloc_tmem")  # noqa: B009


def test_a_dialect_that_fails_to_import_is_named(monkeypatch):
    monkeypatch.setattr(dialects, "_read_entry_points",
                        lambda: [dialects.DialectEntryPoint("cuda", "no_such_module_xyz", "tilelang-x", "1")])
    monkeypatch.delitem(vars(T), "tcgen05_gemm", raising=False)  # resolved (and kept) by an earlier test
    dialects.reset()
    with pytest.raises(AttributeError, match="the 'cuda' language dialect failed to import"):
        getattr(T, "tcgen05_gemm")  # noqa: B009
    dialects.reset()


def test_disabling_plugins_hides_dialects(monkeypatch, fake_dialect):
    monkeypatch.setenv("TILELANG_DISABLE_PLUGIN_AUTOLOAD", "1")
    dialects.reset()
    assert dialects.installed_dialects() == []


def test_tir_script_names_and_reference_names_resolve():
    from tvm import tirx

    for name in ("evaluate", "call_extern", "reinterpret", "assume", "thread_binding", "attr", "launch_thread",
                 "handle", "reads", "writes", "Var", "sblock", "func_attr", "comm_reducer", "tvm_thread_allreduce",
                 "tvm_access_ptr", "type_annotation", "Ramp", "Broadcast", "Select", "Shuffle", "While",
                 "address_of", "shift_left", "call_intrin", "atan", "sinh", "fmod", "nearbyint", "call_packed"):
        assert getattr(T, name) is not None, name
    assert T.Shuffle is tirx.Shuffle
    assert "__log" in T.__all__ and "float32x4" in T.__all__ and "atomic_addx4" in T.__all__


def test_used_reference_names_exist():
    """Every name of the reference's USED lists outside the CUDA groups (missing_T_names.txt, 2026-12-03)."""
    used = """evaluate alloc_buffer reinterpret call_extern assume thread_binding attr launch_thread handle reads writes
    Var sblock decl_buffer ptr func_attr comm_reducer tvm_thread_allreduce match_buffer tvm_access_ptr
    type_annotation Ramp tvm_storage_sync dp4a Broadcast parallel address_of shift_left call_intrin Select
    float8_e4m3 float4_e2m1fnx2 float32x2 sblock_attr While Shuffle sblock_alloc_buffer target atan bitwise_xor
    cosh fmod nearbyint sinh call_packed bind float8_e4m3fnx8 float16x2 float32x4 float32x8 Assert If Then
    env_thread buffer_store shift_right thread_return handle_add_byte_offset tvm_warp_shuffle tvm_call_cpacked let
    alloc_barrier mbarrier_wait_parity access_ptr mbarrier_arrive barrier_arrive barrier_wait im2col
    PersistentTileScheduler atomic_addx4 async_copy atomic_load gemm_sp make_tensor atomic_store clamp
    import_source reshape view alloc_global alloc_reducer atomic_addx2 finalize_reducer Persistent WSID
    WSPipeline WSRole WSSchedule WSScope WSSync annotate_ws_schedule ws_op get_warp_idx_sync mbarrier_expect_tx
    reduce_bitand sync_grid annotate_safe_value any_sync atomic_or cummax reducer_init reducer_update
    reduce_bitor reduce_bitxor sync_warp transpose WSSyncKind activemask all_of all_sync
    annotate_restrict_buffers any_of ballot ballot_sync c2d_im2col get_lane_idx get_warp_idx
    index_to_coordinates mbarrier_arrive_expect_tx no_set_max_nreg shfl_sync syncthreads_and syncthreads_count
    syncthreads_or warp_reduce_bitand warp_reduce_bitor warp_reduce_max warp_reduce_min warp_reduce_sum
    int4 int tfloat32 Ref float4_e2m1_unpacked uint annotate_compile_flags annotate_pass_configs short long
    bfloat16x2 __log __log2 __log10 __tan __cos __sin __exp10 __exp fast_rcp ieee_add ieee_sub ieee_mul
    ieee_fmaf ieee_frcp ieee_fsqrt ieee_frsqrt ieee_fdiv add2 sub2 mul2 fma2 max2 min2 abs2 ptx_cp_async
    ptx_wait_group ptx_commit_group ptx_arrive_barrier PrimExpr align_up extract_lane
    ptx_init_barrier_thread_count Layout Fragment device_assert print""".split()
    missing = [n for n in used if not hasattr(T, n)]
    assert not missing


@pytest.mark.parametrize("path", [
    "tilelang.language.allocate", "tilelang.language.annotations", "tilelang.language.atomic",
    "tilelang.language.builtin", "tilelang.language.common", "tilelang.language.copy_op",
    "tilelang.language.customize", "tilelang.language.dtypes", "tilelang.language.eager",
    "tilelang.language.eager.ast", "tilelang.language.eager.builder", "tilelang.language.eager.utils",
    "tilelang.language.experimental", "tilelang.language.experimental.gemm_sp_op", "tilelang.language.fill_op",
    "tilelang.language.fp8", "tilelang.language.frame", "tilelang.language.gemm_op", "tilelang.language.kernel",
    "tilelang.language.logical", "tilelang.language.loop", "tilelang.language.math_intrinsics",
    "tilelang.language.meta", "tilelang.language.overrides", "tilelang.language.overrides.buffer",
    "tilelang.language.proxy", "tilelang.language.reduce_op", "tilelang.language.scan_op",
    "tilelang.language.symbolics", "tilelang.language.tile_schedule", "tilelang.language.tir",
    "tilelang.language.tir.common", "tilelang.language.tir.entry", "tilelang.language.tir.exports",
    "tilelang.language.tir.ir", "tilelang.language.tir.op", "tilelang.language.utils",
    "tilelang.language.warp_specialize", "tilelang.utils.language",
])
def test_reference_module_paths_import(path):
    importlib.import_module(path)
