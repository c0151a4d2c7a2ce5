"""Before / Expected tests of CUDA passes, each run alone at its extension point and compared by structural
equality: cuda.barrier_allocations, cuda.wgmma_gemm_as_gemm, cuda.tensor_memory, cuda.drop_tensor_memory_tiles,
cuda.wgmma_gemm_no_wait, cuda.dialect_scopes and cuda.legalize_vector_width, plus the kernels each must leave
alone and the inputs it must refuse.

TVMScript has no spelling for the ``tl.*`` calls whose arguments are regions, so the kernels build them through
`_dialect` (the CUDA dialect's intrinsics, as ``T.<name>`` emits them) and `_tile` (core's tile operators).
"""

from __future__ import annotations

import pytest
import tvm
from tvm.script import tirx as S

from tilelang.transform import utils as C

SM90A = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
SM100A = tvm.target.Target({"kind": "cuda", "arch": "sm_100a"})
SM80 = tvm.target.Target({"kind": "cuda", "arch": "sm_80"})


def body_equal(a, b):
    import tvm_ffi

    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal


def _run(factory, func, target=SM90A):
    return factory(target)(tvm.IRModule({"main": func}))


def _dialect(name, *args):
    """``tl.<name>(args)`` as the CUDA dialect emits it (an intrinsic returning ``handle``)."""
    from tilelang_cuda.language._emit import call

    return call(name, "handle", list(args))


def _tile(name, *args):
    """Core's tile operator ``name(args)`` (a ``void`` call)."""
    from tilelang.ir.ops import tile_call
    from tilelang_cuda.language._emit import expr

    return tile_call(name, [expr(a) for a in args])


def _groups(ids):
    """The node of a ``T.ws`` scope: its warpgroups as a string."""
    return tvm.ir.StringImm(ids)


def _sync():
    return S.call_intrin("int32", "tirx.tvm_storage_sync", "shared")


def _refused(factory, func, target, match):
    with pytest.raises(Exception, match=match):
        _run(factory, func, target)
    assert C.take_pending_error() is not None


# ------------------------------------------------------------------------------------------------ barriers
def _barrier_allocations(target):
    from tilelang_cuda.passes.barrier_allocations import BarrierAllocations

    return BarrierAllocations(target)


def test_barrier_tiles_become_shared_arrays_initialised_in_place():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        full = S.alloc_buffer((2,), "uint64", scope="shared.barrier", annotations={"tl.barrier_init": [32, 32]})
        Sh = S.alloc_buffer((2, 64), "float16", scope="shared.dyn")  # noqa: F841
        done = S.alloc_buffer((1,), "uint64", scope="shared.barrier", annotations={"tl.barrier_init": [1]})
        S.evaluate(_dialect("mbarrier_arrive", full[1]))
        S.evaluate(_dialect("mbarrier_wait_parity", done[0], 0))

    @S.prim_func(check_well_formed=False)
    def expected():
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        full = S.alloc_buffer((2,), "uint64", scope="shared")
        S.evaluate(_dialect("init_barriers", full[0], 32, 32))
        Sh = S.alloc_buffer((2, 64), "float16", scope="shared.dyn")  # noqa: F841
        done = S.alloc_buffer((1,), "uint64", scope="shared")
        S.evaluate(_dialect("init_barriers", done[0], 1))
        S.evaluate(_dialect("mbarrier_arrive", full[1]))
        S.evaluate(_dialect("mbarrier_wait_parity", done[0], 0))

    assert body_equal(_run(_barrier_allocations, before), expected)


def test_barrier_allocations_leave_a_kernel_without_barriers_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 64)
        Sh = S.alloc_buffer((64,), scope="shared")
        Sh[tx] = A[tx]
        A[tx] = Sh[63 - tx]

    assert body_equal(_run(_barrier_allocations, before), before)


def test_barrier_tile_without_arrival_counts_is_refused():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 32)
        bar = S.alloc_buffer((1,), "uint64", scope="shared.barrier")
        S.evaluate(_dialect("mbarrier_arrive", bar[0]))

    _refused(_barrier_allocations, before, SM90A, "barrier tile bar has no arrival counts")


# ------------------------------------------------------------------------------------------------ T.wgmma_gemm
def _as_gemm(target):
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmAsGemm

    return WgmmaGemmAsGemm(target)


def _no_wait(target):
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmNoWait

    return WgmmaGemmNoWait(target)


@S.prim_func(check_well_formed=False)
def _wgmma_gemm_kernel(D: S.Buffer((64, 64), "float32")):
    S.launch_thread("blockIdx.x", 1)
    S.launch_thread("threadIdx.x", 128)
    A_shared = S.alloc_buffer((64, 16), "float16", scope="shared.dyn")
    B_shared = S.alloc_buffer((16, 64), "float16", scope="shared.dyn")
    C_local = S.alloc_buffer((64, 64), scope="local.fragment")
    S.evaluate(_dialect("wgmma_gemm", A_shared[0:64, 0:16], B_shared[0:16, 0:64], C_local[0:64, 0:64],
                        False, False, 0, True))
    S.evaluate(_dialect("wait_wgmma", 0))
    S.evaluate(_tile("tl.copy", C_local[0:64, 0:64], D[0:64, 0:64]))


def test_wgmma_gemm_becomes_a_marked_tile_gemm():
    @S.prim_func(check_well_formed=False)
    def expected(D: S.Buffer((64, 64), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 16), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((16, 64), "float16", scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        with S.attr(S.int32(0), "tl.cuda.wgmma_gemm", 1):
            S.evaluate(_tile("tl.gemm", A_shared[0:64, 0:16], B_shared[0:16, 0:64], C_local[0:64, 0:64],
                             False, False, 0, True))
        S.evaluate(_dialect("wait_wgmma", 0))
        S.evaluate(_tile("tl.copy", C_local[0:64, 0:64], D[0:64, 0:64]))

    assert body_equal(_run(_as_gemm, _wgmma_gemm_kernel, SM90A), expected)


def test_wgmma_gemm_as_gemm_leaves_a_plain_gemm_alone():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 16), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((16, 64), "float16", scope="shared.dyn")
        C_local = S.alloc_buffer((64, 64), scope="local.fragment")
        S.evaluate(_tile("tl.gemm", A_shared[0:64, 0:16], B_shared[0:16, 0:64], C_local[0:64, 0:64],
                         False, False, 0, True))

    assert body_equal(_run(_as_gemm, before, SM90A), before)


def test_wgmma_gemm_is_refused_without_wgmma_or_a_fragment_accumulator():
    _refused(_as_gemm, _wgmma_gemm_kernel, SM80, "T.wgmma_gemm\\(\\) requires Hopper WGMMA lowering")

    @S.prim_func(check_well_formed=False)
    def shared_accumulator():
        S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((64, 16), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((16, 64), "float16", scope="shared.dyn")
        C_shared = S.alloc_buffer((64, 64), scope="shared.dyn")
        S.evaluate(_dialect("wgmma_gemm", A_shared[0:64, 0:16], B_shared[0:16, 0:64], C_shared[0:64, 0:64],
                            False, False, 0, True))

    _refused(_as_gemm, shared_accumulator, SM90A, "its accumulator C must be a fragment")


def _issue(acc, form):
    """A wgmma issue as the gemm lowering emits it (descriptors reduced to constants)."""
    return S.call_extern("void", form, S.address_of(acc[0]), S.uint64(1), S.uint64(2))


def test_wgmma_gemm_batch_drops_its_wait_and_the_user_wait_fences_the_accumulator():
    @S.prim_func(check_well_formed=False)
    def before(D: S.Buffer((128, 32), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        with S.attr(S.int32(0), "tl.cuda.wgmma_gemm", 1):
            S.evaluate(_sync())
            S.call_extern("void", "tl_fence_proxy_async")
            S.call_extern("void", "tl_wgmma_fence")
            S.evaluate(_issue(acc, "tl_wgmma_ss_m64n64k16_f16_t01"))
            S.call_extern("void", "tl_wgmma_commit")
            S.call_extern("void", "tl_wgmma_wait")
            S.evaluate(_sync())
        S.call_extern("void", "tl_warpgroup_wait_n", 0)
        for r in range(32):
            D[tx, r] = acc[r]

    @S.prim_func(check_well_formed=False)
    def expected(D: S.Buffer((128, 32), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        S.evaluate(_sync())
        S.call_extern("void", "tl_fence_proxy_async")
        S.call_extern("void", "tl_wgmma_fence")
        S.evaluate(_issue(acc, "tl_wgmma_ss_m64n64k16_f16_t01"))
        S.call_extern("void", "tl_wgmma_commit")
        S.call_extern("void", "tl_warpgroup_wait_n", 0)
        S.call_extern("void", "tl_wgmma_fence_acc", S.address_of(acc[0]), 32)
        for r in range(32):
            D[tx, r] = acc[r]

    assert body_equal(_run(_no_wait, before, SM90A), expected)


def test_rs_wgmma_gemm_keeps_its_wait():
    """An RS batch reads registers the next gemm rewrites: only the marker goes, the wait stays (and the user's
    wait still fences the accumulator)."""

    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        with S.attr(S.int32(0), "tl.cuda.wgmma_gemm", 1):
            S.call_extern("void", "tl_wgmma_fence")
            S.evaluate(_issue(acc, "tl_wgmma_rs_m64n64k16_f16_t01"))
            S.call_extern("void", "tl_wgmma_commit")
            S.call_extern("void", "tl_wgmma_wait")
            S.evaluate(_sync())
        S.call_extern("void", "tl_wgmma_wait_group", 0)

    @S.prim_func(check_well_formed=False)
    def expected():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        S.call_extern("void", "tl_wgmma_fence")
        S.evaluate(_issue(acc, "tl_wgmma_rs_m64n64k16_f16_t01"))
        S.call_extern("void", "tl_wgmma_commit")
        S.call_extern("void", "tl_wgmma_wait")
        S.evaluate(_sync())
        S.call_extern("void", "tl_wgmma_wait_group", 0)
        S.call_extern("void", "tl_wgmma_fence_acc", S.address_of(acc[0]), 32)

    assert body_equal(_run(_no_wait, before, SM90A), expected)


def test_no_wait_leaves_kernels_without_wgmma_gemm_alone():
    """Waits of T.gemm's wgmma batches (no tl.cuda.wgmma_gemm marker) get no fence."""

    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        S.evaluate(_issue(acc, "tl_wgmma_ss_m64n64k16_f16_t01"))
        S.call_extern("void", "tl_wgmma_commit")
        S.call_extern("void", "tl_wgmma_wait")
        S.call_extern("void", "tl_warpgroup_wait_n", 0)

    assert body_equal(_run(_no_wait, before, SM90A), before)


def test_wgmma_gemm_lowered_to_mma_sync_is_refused():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((32,), scope="local")
        with S.attr(S.int32(0), "tl.cuda.wgmma_gemm", 1):
            S.call_extern("void", "tl_mma_f16_f32", S.address_of(acc[0]))

    _refused(_no_wait, before, SM90A, "this gemm does not lower to wgmma here")


# ------------------------------------------------------------------------------------------------ TMEM
def _tensor_memory(target):
    from tilelang_cuda.passes.tensor_memory import TensorMemory

    return TensorMemory(target)


def _drop_tensor_memory(target):
    from tilelang_cuda.passes.tensor_memory import DropTensorMemoryTiles

    return DropTensorMemoryTiles(target)


def _link_slot(func, tile, slot):
    """`func` with ``tl.cuda.tmem_slot`` of `tile`'s allocation set to the buffer of `slot`'s allocation.

    The pass annotates the TMEM tile's allocation with the slot buffer it allocates on the next line; TVMScript
    can only name a buffer after allocating it, so the expected kernel gets that annotation here."""
    import tvm_ffi
    from tvm import tirx

    (slot_buf,) = [a.buffer for a in C.allocations(func.body) if a.buffer.name == slot]

    def on_alloc(a, m):
        if a.buffer.name != tile:
            return a
        return tirx.AllocBuffer(a.buffer, {**dict(a.annotations), "tl.cuda.tmem_slot": slot_buf})

    return C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.AllocBuffer, on_alloc)]))


def test_tmem_tile_gets_columns_and_copies_out_through_shared():
    """Allocation (warp 0, 64 columns for 64 values per row) right after the tile's, deallocation at the end of
    the kernel, and T.copy(tmem, fragment) staged through a shared tile."""

    @S.prim_func(check_well_formed=False)
    def before(C: S.Buffer((128, 48), "float32")):
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 48), scope="shared.tmem")
        frag = S.alloc_buffer((128, 48), scope="local.fragment")
        S.evaluate(_tile("tl.copy", acc[0:128, 0:48], frag[0:128, 0:48]))
        S.evaluate(_tile("tl.copy", frag[0:128, 0:48], C[0:128, 0:48]))

    @S.prim_func(check_well_formed=False)
    def expected(C: S.Buffer((128, 48), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 48), scope="shared.tmem", annotations={"tl.cuda.tmem_cols": 64})
        acc_base = S.alloc_buffer((1,), "uint32", scope="shared")
        if tx // 32 == 0:
            S.call_extern("void", "tl_tmem_alloc", S.address_of(acc_base[0]), 64)
            S.call_extern("void", "tl_tmem_relinquish")  # once, after the kernel's last allocation
        S.call_extern("void", "tl_tcgen05_before_thread_sync")
        S.evaluate(_sync())
        S.call_extern("void", "tl_tcgen05_after_thread_sync")
        frag = S.alloc_buffer((128, 48), scope="local.fragment")
        acc_stage = S.alloc_buffer((128, 48), scope="shared.dyn")
        S.evaluate(_tile("tl.copy", acc[0:128, 0:48], acc_stage[0:128, 0:48]))
        S.evaluate(_tile("tl.copy", acc_stage[0:128, 0:48], frag[0:128, 0:48]))
        S.evaluate(_tile("tl.copy", frag[0:128, 0:48], C[0:128, 0:48]))
        S.call_extern("void", "tl_tcgen05_before_thread_sync")
        S.evaluate(_sync())
        if tx // 32 == 0:
            S.call_extern("void", "tl_tmem_dealloc", acc_base[0], 64)

    after = _run(_tensor_memory, before, SM100A)
    assert body_equal(after, _link_slot(expected, "acc", "acc_base"))


def test_tmem_tile_deallocated_by_the_kernel_gets_no_implicit_dealloc():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("blockIdx.x", 1)
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 256), scope="shared.tmem")
        S.evaluate(_dialect("deallocate_tmem", acc[0:128, 0:256]))

    @S.prim_func(check_well_formed=False)
    def expected():
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 256), scope="shared.tmem", annotations={"tl.cuda.tmem_cols": 256})
        acc_base = S.alloc_buffer((1,), "uint32", scope="shared")
        if tx // 32 == 0:
            S.call_extern("void", "tl_tmem_alloc", S.address_of(acc_base[0]), 256)
            S.call_extern("void", "tl_tmem_relinquish")  # once, after the kernel's last allocation
        S.call_extern("void", "tl_tcgen05_before_thread_sync")
        S.evaluate(_sync())
        S.call_extern("void", "tl_tcgen05_after_thread_sync")
        S.evaluate(_dialect("deallocate_tmem", acc[0:128, 0:256]))

    after = _run(_tensor_memory, before, SM100A)
    assert body_equal(after, _link_slot(expected, "acc", "acc_base"))


def test_tensor_memory_leaves_kernels_without_tmem_alone():
    @S.prim_func(check_well_formed=False)
    def before(C: S.Buffer((128, 48), "float32")):
        S.launch_thread("threadIdx.x", 128)
        Sh = S.alloc_buffer((128, 48), scope="shared.dyn")
        frag = S.alloc_buffer((128, 48), scope="local.fragment")
        S.evaluate(_tile("tl.copy", Sh[0:128, 0:48], frag[0:128, 0:48]))
        S.evaluate(_tile("tl.copy", frag[0:128, 0:48], C[0:128, 0:48]))

    assert body_equal(_run(_tensor_memory, before, SM100A), before)


def test_tmem_tile_is_refused_off_blackwell_and_past_512_columns():
    @S.prim_func(check_well_formed=False)
    def small():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 64), scope="shared.tmem")
        S.evaluate(_dialect("deallocate_tmem", acc[0:128, 0:64]))

    @S.prim_func(check_well_formed=False)
    def wide():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((2, 128, 320), scope="shared.tmem")
        S.evaluate(_dialect("deallocate_tmem", acc[0:2, 0:128, 0:320]))

    _refused(_tensor_memory, small, SM90A, "T.alloc_tmem on target 'cuda'")
    _refused(_tensor_memory, wide, SM100A, "needs 640 columns; tensor memory has 512")


def test_drop_tensor_memory_tiles_removes_the_lowered_tiles_allocation():
    @S.prim_func(check_well_formed=False)
    def before(D: S.Buffer((128,), "uint32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 64), scope="shared.tmem", annotations={"tl.cuda.tmem_cols": 64})  # noqa: F841
        acc_base = S.alloc_buffer((1,), "uint32", scope="shared")
        if tx // 32 == 0:
            S.call_extern("void", "tl_tmem_alloc", S.address_of(acc_base[0]), 64)
        D[tx] = acc_base[0] + S.uint32(16)

    @S.prim_func(check_well_formed=False)
    def expected(D: S.Buffer((128,), "uint32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        S.evaluate(0)
        acc_base = S.alloc_buffer((1,), "uint32", scope="shared")
        if tx // 32 == 0:
            S.call_extern("void", "tl_tmem_alloc", S.address_of(acc_base[0]), 64)
        D[tx] = acc_base[0] + S.uint32(16)

    assert body_equal(_run(_drop_tensor_memory, before, SM100A), expected)


def test_drop_tensor_memory_tiles_leaves_kernels_without_tmem_alone():
    @S.prim_func(check_well_formed=False)
    def before(D: S.Buffer((128,), "float32")):
        tx = S.launch_thread("threadIdx.x", 128)
        Sh = S.alloc_buffer((128,), scope="shared")
        Sh[tx] = D[tx]
        D[127 - tx] = Sh[tx]

    assert body_equal(_run(_drop_tensor_memory, before, SM100A), before)


def test_drop_tensor_memory_tiles_refuses_a_tile_still_in_use():
    @S.prim_func(check_well_formed=False)
    def before():
        S.launch_thread("threadIdx.x", 128)
        acc = S.alloc_buffer((128, 64), scope="shared.tmem")
        acc[0, 0] = S.float32(0)

    _refused(_drop_tensor_memory, before, SM100A, "TMEM tile acc is used in a way")


# ------------------------------------------------------------------------------------------------ scopes
def _dialect_scopes(target):
    from tilelang_cuda.passes.dialect_scopes import DialectScopes

    return DialectScopes(target)


def test_scoped_calls_get_the_thread_range_of_their_ifs():
    """``tx < 32`` keeps [0, 32), its else [32, 128), ``tx < 64`` there [32, 64); ``32 <= tx < 64`` [32, 64)."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((128, 64), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((128, 64), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((64, 128), "float16", scope="shared.dyn")
        acc = S.alloc_buffer((128, 128), scope="shared.tmem")
        bars = S.alloc_buffer((2,), "uint64", scope="shared")
        if tx < 32:
            S.evaluate(_dialect("tma_copy", A[0:128, 0:64], A_shared[0:128, 0:64], bars[0], -1, 0, 0))
            S.evaluate(_dialect("mbarrier_arrive", bars[0]))
        else:
            if tx < 64:
                S.evaluate(_dialect("tcgen05_gemm", A_shared[0:128, 0:64], B_shared[0:64, 0:128],
                                    acc[0:128, 0:128], False, False, True, bars[1], 0))
        if 32 <= tx and tx < 64:
            S.evaluate(_dialect("tcgen05_mma_arrive", bars[1], 0))

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((128, 64), "float16")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 128)
        A_shared = S.alloc_buffer((128, 64), "float16", scope="shared.dyn")
        B_shared = S.alloc_buffer((64, 128), "float16", scope="shared.dyn")
        acc = S.alloc_buffer((128, 128), scope="shared.tmem")
        bars = S.alloc_buffer((2,), "uint64", scope="shared")
        if tx < 32:
            S.evaluate(_dialect("tma_copy", A[0:128, 0:64], A_shared[0:128, 0:64], bars[0], -1, 0, 0, 0, 32))
            S.evaluate(_dialect("mbarrier_arrive", bars[0]))
        else:
            if tx < 64:
                S.evaluate(_dialect("tcgen05_gemm", A_shared[0:128, 0:64], B_shared[0:64, 0:128],
                                    acc[0:128, 0:128], False, False, True, bars[1], 0, 32, 32))
        if 32 <= tx and tx < 64:
            S.evaluate(_dialect("tcgen05_mma_arrive", bars[1], 0, 32, 32))

    assert body_equal(_run(_dialect_scopes, before, SM100A), expected)


@S.prim_func(check_well_formed=False)
def _warp_specialized(A: S.Buffer((4, 128), "float16"), Out: S.Buffer((128,), "float32")):
    S.launch_thread("blockIdx.x", 1)
    tx = S.launch_thread("threadIdx.x", 256)
    S.evaluate(_dialect("annotate_producer_reg_dealloc", 40))
    S.evaluate(_dialect("annotate_consumer_reg_alloc", 232))
    Sh = S.alloc_buffer((2, 128), "float16", scope="shared.dyn")
    full = S.alloc_buffer((2,), "uint64", scope="shared")
    for r in range(4):
        if tx // 128 == 1:
            with S.attr(_groups("1"), "tl.cuda.warp_group", 128):
                S.evaluate(_dialect("tma_copy", A[r, 0:128], Sh[r % 2, 0:128], full[r % 2], -1, 0, 0))
        if tx // 128 == 0:
            with S.attr(_groups("0"), "tl.cuda.warp_group", 128):
                S.evaluate(_dialect("mbarrier_wait_parity", full[r % 2], r // 2 % 2))
                Out[tx] = S.Cast("float32", Sh[r % 2, tx])


def test_warp_specialised_kernel_sets_registers_per_warpgroup():
    """The producer warpgroup (1: copies only) gets setmaxnreg.dec 40, the consumer (0) setmaxnreg.inc 232, once,
    before the loop holding the T.ws scopes; the annotations are gone; the copy runs in [128, 256)."""

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((4, 128), "float16"), Out: S.Buffer((128,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 256)
        S.evaluate(0)
        S.evaluate(0)
        Sh = S.alloc_buffer((2, 128), "float16", scope="shared.dyn")
        full = S.alloc_buffer((2,), "uint64", scope="shared")
        if tx // 128 == 0:
            S.evaluate(_dialect("set_max_nreg", 232, 1))
        if tx // 128 == 1:
            S.evaluate(_dialect("set_max_nreg", 40, 0))
        for r in range(4):
            if tx // 128 == 1:
                with S.attr(_groups("1"), "tl.cuda.warp_group", 128):
                    S.evaluate(_dialect("tma_copy", A[r, 0:128], Sh[r % 2, 0:128], full[r % 2], -1, 0, 0, 128, 128))
            if tx // 128 == 0:
                with S.attr(_groups("0"), "tl.cuda.warp_group", 128):
                    S.evaluate(_dialect("mbarrier_wait_parity", full[r % 2], r // 2 % 2))
                    Out[tx] = S.Cast("float32", Sh[r % 2, tx])

    assert body_equal(_run(_dialect_scopes, _warp_specialized, SM90A), expected)


def test_no_set_max_nreg_drops_the_register_annotations_only():
    @S.prim_func(check_well_formed=False)
    def before(Out: S.Buffer((256,), "float32")):
        tx = S.launch_thread("threadIdx.x", 256)
        S.evaluate(_dialect("annotate_consumer_reg_alloc", 232))
        S.evaluate(_dialect("no_set_max_nreg"))
        with S.attr(_groups("0,1"), "tl.cuda.warp_group", 128):
            Out[tx] = S.float32(1)

    @S.prim_func(check_well_formed=False)
    def expected(Out: S.Buffer((256,), "float32")):
        tx = S.launch_thread("threadIdx.x", 256)
        S.evaluate(0)
        S.evaluate(0)
        with S.attr(_groups("0,1"), "tl.cuda.warp_group", 128):
            Out[tx] = S.float32(1)

    assert body_equal(_run(_dialect_scopes, before, SM90A), expected)


def test_dialect_scopes_leave_kernels_without_scoped_calls_alone():
    @S.prim_func(check_well_formed=False)
    def before(Out: S.Buffer((256,), "float32")):
        tx = S.launch_thread("threadIdx.x", 256)
        full = S.alloc_buffer((1,), "uint64", scope="shared")
        if tx < 32:
            S.evaluate(_dialect("mbarrier_arrive", full[0]))
        Out[tx] = S.float32(1)

    assert body_equal(_run(_dialect_scopes, before, SM90A), before)


# ------------------------------------------------------------------------------------------------ vectors
def _legalize(target):
    from tilelang_cuda.passes.legalize_vector_width import LegalizeVectorWidth

    return LegalizeVectorWidth(target)


def test_wide_vector_loop_splits_into_16_byte_vectors():
    """float32 x 64 -> 16 x float32x4; a float16 store of float32 loads splits by its widest access (4 bytes);
    a loop that does not start at 0 keeps its start."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "float32"), B: S.Buffer((64,), "float32"), H: S.Buffer((64,), "float16")):
        for i in S.vectorized(64):
            B[i] = A[i] * S.float32(2)
        for j in S.vectorized(32):
            H[j] = S.Cast("float16", A[j])
        for k in S.vectorized(8, 40):
            B[k] = S.float32(0)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "float32"), B: S.Buffer((64,), "float32"), H: S.Buffer((64,), "float16")):
        for i_o in range(16):
            for i_v in S.vectorized(4):
                B[i_o * 4 + i_v] = A[i_o * 4 + i_v] * S.float32(2)
        for j_o in range(8):
            for j_v in S.vectorized(4):
                H[j_o * 4 + j_v] = S.Cast("float16", A[j_o * 4 + j_v])
        for k_o in range(8):
            for k_v in S.vectorized(4):
                B[8 + (k_o * 4 + k_v)] = S.float32(0)

    assert body_equal(_run(_legalize, before), expected)


def test_vector_loop_with_swizzled_indices_keeps_int32x4_index_vectors():
    """8 bf16 lanes (16 bytes) whose index XORs the loop variable (a swizzled tile) compute the index as a vector
    of int32 lanes: split to 4 (TVM's CUDA C builds no 8-lane int32 vector: nvcc failed on make_longlong4 with 8
    arguments, the reference's dequantising GEMMs); an affine index keeps its 8 lanes."""

    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((64,), "bfloat16"), B: S.Buffer((64,), "bfloat16"), C: S.Buffer((64,), "bfloat16")):
        for i in S.vectorized(8):
            B[S.bitwise_xor(i, 3) + 8] = A[i]
        for j in S.vectorized(8):
            C[j + 8] = A[j]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((64,), "bfloat16"), B: S.Buffer((64,), "bfloat16"), C: S.Buffer((64,), "bfloat16")):
        for i_o in range(2):
            for i_v in S.vectorized(4):
                B[S.bitwise_xor(i_o * 4 + i_v, 3) + 8] = A[i_o * 4 + i_v]
        for j in S.vectorized(8):
            C[j + 8] = A[j]

    assert body_equal(_run(_legalize, before), expected)


def test_wide_vector_loop_that_does_not_split_evenly_becomes_serial():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((18,), "float32")):
        for i in S.vectorized(18):
            A[i] = S.float32(1)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((18,), "float32")):
        for i in range(18):
            A[i] = S.float32(1)

    assert body_equal(_run(_legalize, before), expected)


def test_vectors_of_at_most_16_bytes_are_left_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32"), H: S.Buffer((8,), "float16"), B: S.Buffer((64,), "float32")):
        for i in S.vectorized(4):
            A[i] = S.float32(1)
        for j in S.vectorized(8):
            H[j] = S.float16(1)
        for k in range(64):
            B[k] = S.float32(1)

    assert body_equal(_run(_legalize, before), before)
