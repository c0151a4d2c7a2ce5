"""The CUDA dialect's constructs (``T.mbarrier_*``, ``T.tma_copy``, ``T.set_max_nreg``, ``T.pdl_*``, clusters,
explicit loads / stores, ``T.rng_*``, ``T.ptx_*`` ...): each lowers on the lowest architecture that has it, nvcc
builds the cubin for that architecture and its PTX holds the intended instruction; an older CUDA target and a
target of another kind refuse it with a LoweringError naming the construct, the target and that architecture.
"""

from __future__ import annotations

import re

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


def _target(arch: str) -> dict:
    return {"kind": "cuda", "arch": arch}


def _ptx(prim_func, arch: str) -> str:
    from tilelang_cuda.compiler import compile_artifact

    return compile_artifact(tilelang.lower(prim_func, target=_target(arch))).ptx


# ------------------------------------------------------------------------------------------------ kernels
def barriers():
    @T.prim_func
    def k(A: T.Tensor((256,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            bars = T.alloc_barrier([128, 128])
            tx = T.get_thread_binding()
            T.mbarrier_arrive(bars[0])
            T.barrier_wait(bars[0], 0)
            T.cp_async_barrier_noinc(bars[1])
            A[bx * 128 + tx] = 1.0
    return k


def transactions():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            bars = T.alloc_barrier([1])
            T.mbarrier_expect_tx(bars[0], 0)
            T.mbarrier_arrive_expect_tx(bars[0], 0)
            T.fence_proxy_async()
            A[T.get_thread_binding()] = 0.0
    return k


def registers():
    @T.prim_func
    def k(A: T.Tensor((256,), "float32")):
        with T.Kernel(1, threads=256):
            tx = T.get_thread_binding()
            if tx < 128:
                T.set_max_nreg(240, 1)
            else:
                T.dec_max_nreg(24)
            A[tx] = 0.0
    return k


def pdl():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.pdl_sync()
            A[T.get_thread_binding()] = 2.0
            T.pdl_trigger()
    return k


def cluster():
    @T.prim_func
    def k(A: T.Tensor((8,), "int32")):
        with T.ClusterKernel(8, cluster_dims=2, threads=128) as bx:
            T.cluster_sync()
            if T.get_thread_binding() == 0:
                A[bx] = T.block_rank_in_cluster()
            T.cluster_arrive()
            T.cluster_wait()
    return k


def loads_and_stores():
    @T.prim_func
    def k(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            S = T.alloc_shared((1024,), "float32", scope="shared")
            tx = T.get_thread_binding()
            v = T.ldg128(A[tx * 4:tx * 4 + 4])
            T.sts128(S[tx * 4:tx * 4 + 4], v)
            w = T.lds128(S[tx * 4:tx * 4 + 4])
            T.stg128(B[tx * 4:tx * 4 + 4], w, pred=tx < 200)
            B[tx] = B[tx] + T.__ldg(A[tx]) + T.cast(T.__ffs(tx), "float32") + T.cast(bx, "float32")
    return k


def rng():
    @T.prim_func
    def k(A: T.Tensor((256,), "uint32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(2, threads=128) as bx:
            tx = T.get_thread_binding()
            T.rng_init(42)
            A[bx * 128 + tx] = T.rng_rand()
            B[bx * 128 + tx] = T.rng_rand_float() + T.rng_rand_float(dist="normal")
    return k


def cp_async():
    @T.prim_func
    def k(A: T.Tensor((512,), "float16"), B: T.Tensor((512,), "float16")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((512,), "float16")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[tx * 8], "w", 8), T.access_ptr(A[tx * 8], "r", 8), 8)
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            T.sync_threads()
            for i in T.serial(8):
                B[tx * 8 + i] = S[tx * 8 + i]
    return k


def tma():
    @T.prim_func
    def k(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_shared((64, 128), "float16")
            bar = T.alloc_barrier([128])
            T.tma_copy(A[bx * 64:(bx + 1) * 64, 0:128], S, barrier=bar[0])
            T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            T.tma_copy(S, B[bx * 64:(bx + 1) * 64, 0:128])
            T.tma_store_arrive()
            T.tma_store_wait(0)
    return k


def elect_and_wgmma_batches():
    @T.prim_func
    def k(A: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128):
            acc = T.alloc_local((4,), "float32")
            for i in T.serial(4):
                acc[i] = 0.0
            T.warpgroup_arrive()
            T.warpgroup_commit_batch()
            T.wait_wgmma(0)
            T.warpgroup_fence_operand(acc, num_regs=4)
            if T.shuffle_elect(128):
                A[0] = T.get_warp_group_idx()
    return k


def tcgen05():
    from dialect_kernels import tcgen05_gemm

    return tcgen05_gemm(128, 128, 128)


CASES = [
    # (kernel, lowest arch, PTX instructions, an arch without them or None)
    (barriers, "sm_80", ["mbarrier.init.shared", "mbarrier.test_wait.parity", "cp.async.mbarrier.arrive.noinc"],
     None),
    (transactions, "sm_90", ["mbarrier.expect_tx", "mbarrier.arrive.expect_tx", "fence.proxy.async"], "sm_80"),
    (registers, "sm_90a", ["setmaxnreg.inc.sync.aligned.u32 240", "setmaxnreg.dec.sync.aligned.u32 24"], "sm_90"),
    (pdl, "sm_90", ["griddepcontrol.wait", "griddepcontrol.launch_dependents"], "sm_80"),
    (cluster, "sm_90", ["barrier.cluster.arrive", "barrier.cluster.wait", "%cluster_ctarank"], "sm_80"),
    (loads_and_stores, "sm_80", ["ld.global.nc.v4", "st.shared.v4", "ld.shared.v4", "st.global.v4"], None),
    (rng, "sm_80", ["mul.hi.u32"], None),
    (cp_async, "sm_80", ["cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group 0"], None),
    (tma, "sm_90", ["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                    "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "cp.async.bulk.wait_group.read 0",
                    "mbarrier.try_wait.parity"], "sm_80"),
    (elect_and_wgmma_batches, "sm_90a", ["wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned",
                                         "wgmma.wait_group.sync.aligned 0", "elect.sync"], "sm_80"),
    (tcgen05, "sm_100a", ["tcgen05.alloc.cta_group::1", "tcgen05.mma.cta_group::1.kind::f16",
                          "tcgen05.commit.cta_group::1.mbarrier::arrive::one", "tcgen05.ld.sync.aligned.32x32b",
                          "tcgen05.wait::ld", "tcgen05.dealloc.cta_group::1"], "sm_90a"),
]


@needs_nvcc
@pytest.mark.parametrize("make,arch,instructions,older", CASES, ids=[c[0].__name__ for c in CASES])
def test_construct_compiles_to_its_instructions(make, arch, instructions, older):
    ptx = _ptx(make(), arch)
    missing = [i for i in instructions if i not in ptx]
    assert not missing, f"PTX for {arch} lacks {missing}"


@pytest.mark.parametrize("make,arch,older", [(c[0], c[1], c[3]) for c in CASES if c[3] is not None],
                         ids=[c[0].__name__ for c in CASES if c[3] is not None])
def test_older_architectures_refuse_with_the_lowest_arch(make, arch, older):
    with pytest.raises(LoweringError) as info:
        tilelang.lower(make(), target=_target(older))
    text = str(info.value)
    assert re.search(r"T\.\w+ on target 'cuda'", text), text
    assert f"target arch {older}" in text and "and newer have" in text, text
    assert re.search(r"sm_\d+a? and newer", text)


@pytest.mark.parametrize("target", ["cpu", {"kind": "webgpu"}])
def test_other_target_kinds_refuse_cuda_constructs(target):
    pytest.importorskip("tilelang_cpu") if target == "cpu" else pytest.importorskip("tilelang_webgpu")
    with pytest.raises(LoweringError, match=r"T\.pdl_sync on target '\w+': is a CUDA construct .*sm_90"):
        tilelang.lower(pdl(), target=target)


def test_sm100_loads_are_refused_before_blackwell():
    @T.prim_func
    def k(A: T.Tensor((2048,), "float32"), B: T.Tensor((2048,), "float32")):
        with T.Kernel(1, threads=256):
            tx = T.get_thread_binding()
            T.stg256(B[tx * 8:tx * 8 + 8], T.ldg256(A[tx * 8:tx * 8 + 8]))

    with pytest.raises(LoweringError, match=r"T\.(ldg|stg)256 .*sm_100 and newer.*target arch sm_90a"):
        tilelang.lower(k, target=_target("sm_90a"))


@needs_nvcc
def test_sm100_wide_loads_compile_for_blackwell():
    @T.prim_func
    def k(A: T.Tensor((2048,), "float32"), B: T.Tensor((2048,), "float32")):
        with T.Kernel(1, threads=256):
            tx = T.get_thread_binding()
            T.stg256(B[tx * 8:tx * 8 + 8], T.ldg256(A[tx * 8:tx * 8 + 8]))

    ptx = _ptx(k, "sm_100a")
    assert "ld.global.nc.v4.b64" in ptx and "st.global.v4.b64" in ptx


def test_cluster_kernel_declares_its_cluster_shape():
    src = tilelang.lower(cluster(), target=_target("sm_90")).kernel_source
    assert "__cluster_dims__(2, 1, 1)" in src and "tl_cluster_dims_marker" not in src


def test_cluster_dims_must_tile_the_grid():
    with pytest.raises(Exception, match="not a multiple of the cluster extent"):
        @T.prim_func
        def k(A: T.Tensor((8,), "int32")):
            with T.ClusterKernel(3, cluster_dims=2, threads=32):
                A[0] = 0


def test_min_blocks_per_sm_sets_the_launch_bounds():
    @T.prim_func
    def k(A: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.annotate_min_blocks_per_sm(2)
            A[T.get_thread_binding()] = 0.0

    src = tilelang.lower(k, target=_target("sm_80")).kernel_source
    assert "__launch_bounds__(128, 2)" in src


def test_tma_tensor_maps_travel_as_kernel_parameters():
    art = tilelang.lower(tma(), target=_target("sm_90a"))
    assert "const __grid_constant__ tl_tensor_map_t tl_tmap_A_b64x128_s0" in art.kernel_source
    assert art.metadata["tma_maps"]["tl_tmap_B_b64x128_s0"] == {"buffer": "B", "box": [64, 128], "swizzle": 0}


def test_set_max_nreg_checks_its_count():
    from tilelang.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match="multiple of 8 in \\[24, 256\\]"):
        @T.prim_func
        def k(A: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=128):
                T.set_max_nreg(250, 1)


def test_tma_load_needs_a_barrier():
    from tilelang.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match="needs barrier="):
        @T.prim_func
        def k(A: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128):
                S = T.alloc_shared((64, 64), "float16")
                T.tma_copy(A, S)


@pytest.mark.parametrize("make,arch,family", [(elect_and_wgmma_batches, "sm_100a", "sm_90a"),
                                              (tcgen05, "sm_120a", "sm_100a")])
def test_arch_specific_constructs_stay_in_their_generation(make, arch, family):
    """wgmma is Hopper's (sm_100a has tcgen05 instead); tcgen05 is datacenter Blackwell's (not sm_120a)."""
    with pytest.raises(LoweringError) as info:
        tilelang.lower(make(), target=_target(arch))
    assert f"which only {family}" in str(info.value) and f"target arch {arch} does not" in str(info.value)


def _wgmma_gemm(M: int, accum: str = "float32"):
    @T.prim_func
    def k(A: T.Tensor((M, 16), "float16"), B: T.Tensor((16, 64), "float16"), D: T.Tensor((M, 64), accum)):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((M, 16), "float16")
            B_shared = T.alloc_shared((16, 64), "float16")
            C_local = T.alloc_fragment((M, 64), accum)
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.wgmma_gemm(A_shared, B_shared, C_local, clear_accum=True)
            T.wait_wgmma(0)
            T.copy(C_local, D)
    return k


@needs_nvcc
def test_wgmma_gemm_compiles_to_wgmma():
    ptx = _ptx(_wgmma_gemm(64), "sm_90a")
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in ptx and "wgmma.wait_group.sync.aligned 0" in ptx


@pytest.mark.parametrize("M,accum,arch,why", [(64, "float32", "sm_80", "needs wgmma, which sm_90a"),
                                              (64, "float32", "sm_90", "needs wgmma, which sm_90a"),
                                              (32, "float32", "sm_90a", "does not lower to wgmma"),
                                              (64, "float16", "sm_90a", "does not lower to wgmma")])
def test_wgmma_gemm_never_falls_back(M, accum, arch, why):
    with pytest.raises(LoweringError) as info:
        tilelang.lower(_wgmma_gemm(M, accum), target=_target(arch))
    assert "T.wgmma_gemm() requires Hopper WGMMA lowering" in str(info.value) and why in str(info.value)
