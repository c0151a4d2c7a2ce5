"""Small CuTe DSL kernels calling one ``tilelang_cuda.contrib.cutedsl`` helper each, for test_cutedsl_helpers.py.

The CuTe DSL traces Python from source files, so the kernels live here rather than in the test. `ptx(name, arch)`
compiles kernel `name` for `arch` (no GPU needed) and returns its PTX.
"""

from __future__ import annotations

import importlib

import cutlass
import cutlass.cute as cute
from cutlass import Float32, Int32

import tilelang_cuda.contrib.cutedsl as cutedsl_lib
from tilelang_cuda.contrib.cutedsl import (
    atomic,
    cluster,
    cpasync,
    gemm_tcgen05,
    gemm_v1,
    gemm_v2,
    grid_sync,
    ieee_math,
    ldsm,
    quantize,
    reduce,
    threadblock_swizzle,
    utils,
    warp,
)
from tilelang_cuda.contrib.cutedsl import math as tlmath

KERNELS = {}  # name -> (CuTe DSL kernel, number of tensor arguments: g float32, i int32, h float16)


def kernel(fn):
    KERNELS[fn.__name__] = (cute.kernel(fn), fn.__code__.co_argcount)
    return fn


@kernel
def k_bar_sync(g: cute.Tensor):
    reduce.bar_sync(1, 64)
    reduce.bar_sync_ptx(2, 128)


@kernel
def k_named_barrier(g: cute.Tensor):
    reduce.NamedBarrier(64).sync()
    reduce.NamedBarrier(96, barrier_id=3).arrive()


@kernel
def k_allreduce_warp(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    g[tidx] = reduce.AllReduce(reduce.MaxOp, 32, 1, 0).run(x)


@kernel
def k_allreduce_block(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    smem = cutlass.memory.SmemAllocator()
    buf = smem.allocate_array(Float32, 128)
    x = Float32(g[tidx])
    g[tidx] = reduce.AllReduce(reduce.SumOp, 128, 1, 0, 128).run_hopper(x, buf)


@kernel
def k_minmax(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    a = Int32(tidx)
    g[tidx] = Float32(reduce.min(a, Int32(7)) + reduce.max(a, Int32(3))) + reduce.max(Float32(g[tidx]), 1.5)


@kernel
def k_cumsum(g: cute.Tensor):
    reduce.CumSum1D(32, False).run(g.iterator, g.iterator, 32)
    reduce.CumSum2D(64, 1, True).run(g.iterator, g.iterator, 2, 16)
    reduce.CumMax1D(32, False).run(g.iterator, g.iterator, 32)


@kernel
def k_warp(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    i = Int32(tidx)
    s = warp.warp_reduce_sum(x) + warp.warp_reduce_max(x) + warp.warp_reduce_min(x)
    bits = warp.warp_reduce_bitand(i) | warp.warp_reduce_bitor(i) | warp.__popc(warp.__activemask())
    bits = bits + warp.__match_any_sync(warp.FULL_MASK, i)
    s = s + warp.__shfl_sync(warp.FULL_MASK, x, 0) + warp.__shfl_up_sync(warp.FULL_MASK, x, 1)
    s = s + warp.__shfl_down_sync(warp.FULL_MASK, x, 2, 16)
    g[tidx] = s + Float32(bits)


@kernel
def k_math_fast(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    y = tlmath.exp2(x, fastmath=True) + tlmath.rsqrt(x, fastmath=True) + tlmath.log2(x, fastmath=True)
    y = y + tlmath.tanh(x, fastmath=True) + tlmath.sin(x, fastmath=True) + tlmath.exp10(x, fastmath=True)
    g[tidx] = y


@kernel
def k_math_exact(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    y = tlmath.exp(x) + tlmath.log(x) + tlmath.log1p(x) + tlmath.log10(x) + tlmath.cos(x) + tlmath.tan(x)
    y = y + tlmath.sqrt(x) + tlmath.fabsf(x) + tlmath.abs2(x) + tlmath.max2(x, 1.0) + tlmath.min2(x, 2.0)
    y = y + tlmath.divf(x, 3.0) + tlmath.copysignf(x, -1.0) + tlmath.tanh(x)
    h = tlmath.__habs(cutlass.Float16(x)) + tlmath.__float2half_rz(x)
    y = cutlass.select_(tlmath.isfinite(x), y + Float32(h), y)
    g[tidx] = y


@kernel
def k_atomic(g: cute.Tensor, i: cute.Tensor, h: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    p = g.iterator + tidx * 4
    atomic.AtomicAdd(g.iterator, 1.0)
    old = atomic.AtomicAddRet(i.iterator, 2)
    atomic.AtomicMax(i.iterator + 1, old)
    atomic.AtomicMin(i.iterator + 2, 5)
    atomic.AtomicMax(g.iterator + 1, 2.5)
    atomic.AtomicMinRet(g.iterator + 2, -1.0)
    atomic.AtomicAdd(h.iterator, 1.0)
    atomic.AtomicAddx2(p, (1.0, 2.0))
    atomic.AtomicAddx4(p, (1.0, 2.0, 3.0, 4.0))
    v = atomic.AtomicLoad(i.iterator + 3, 2)
    atomic.AtomicStore(i.iterator + 4, v, 3)
    atomic.AtomicStore(g.iterator + 5, atomic.AtomicLoad(g.iterator + 6, 5), 5)


def _smem(dtype, n):
    return cutlass.memory.SmemAllocator().allocate_array(dtype, n)


@kernel
def k_cp_async_80(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    buf = _smem(Float32, 512)
    cpasync.cp_async_gs(16, buf + tidx * 4, g.iterator + tidx * 4)
    cpasync.cp_async_gs(4, buf + tidx, g.iterator + tidx)
    cpasync.cp_async_gs_conditional(8, buf + tidx * 2, g.iterator + tidx * 2, tidx < 7)
    cpasync.cp_async_commit()
    cpasync.cp_async_wait(0)
    g[tidx] = buf[tidx]


@kernel
def k_mbarrier(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bar = _smem(cutlass.Int64, 2)
    buf = _smem(Float32, 512)
    cpasync.mbarrier_init(bar, 1)
    cpasync.fence_barrier_init()
    cpasync.fence_proxy_async()
    cpasync.mbarrier_expect_tx(bar, 64)
    cpasync.arrive_and_expect_tx(bar, 64)
    cpasync.tma_load(buf, g.iterator, bar, 64)
    cpasync.tma_load(g.iterator, bar, buf, (0, 1))
    cpasync.tma_store(g.iterator, buf, (2, 3, 4))
    cpasync.tma_reduce(g.iterator, buf, (5,))
    cpasync.tma_store(g.iterator, buf, 64)
    cpasync.tma_store_arrive()
    cpasync.tma_store_wait(0)
    cpasync.prefetch_tma_descriptor(g.iterator)
    cpasync.mbarrier_cp_async_arrive(bar + 1)
    cpasync.mbarrier_cp_async_arrive_noinc(bar + 1)
    cpasync.mbarrier_arrive(bar)
    cpasync.mbarrier_wait(bar, 0)
    g[tidx] = buf[tidx]


@kernel
def k_ldmatrix_80(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    buf = _smem(cutlass.Float16, 2048)
    regs = cute.make_rmem_tensor(cute.make_layout(8), cutlass.Float16)
    ldsm.ptx_ldmatrix_x1(buf + tidx * 8, regs.iterator)
    ldsm.ldmatrix_x2(buf + tidx * 8, regs.iterator)
    ldsm.ptx_ldmatrix_x4_trans(buf + tidx * 8, regs.iterator)
    g[tidx] = Float32(regs[0]) + Float32(regs[7])


@kernel
def k_stmatrix(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    buf = _smem(cutlass.Float16, 2048)
    v = Int32(tidx)
    ldsm.ptx_stmatrix_x1(buf + tidx * 8, v)
    ldsm.stmatrix_x4_trans(buf + tidx * 8, v, v, v, v)
    g[tidx] = Float32(buf[tidx])


@kernel
def k_swizzle(g: cute.Tensor):
    t = threadblock_swizzle.ThreadIdx()
    a = threadblock_swizzle.rasterization2DRow(8)
    b = threadblock_swizzle.rasterization2DColumn(4)
    c = threadblock_swizzle.rasterization2DRowWithCluster(8, 2)
    d = threadblock_swizzle.rasterization2DColumnWithCluster(4, 2)
    g[t.x] = Float32(a.x + a.y + b.x + b.y + c.x + c.y + d.x + d.y + threadblock_swizzle.GridDim().x)


@kernel
def k_grid_sync(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    g[tidx] = Float32(1.0)
    grid_sync.sync_grid()
    grid_sync.sync_grid()
    g[tidx] = g[tidx + 1]


@kernel
def k_cluster(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    cluster.cluster_arrive_relaxed()
    cluster.cluster_wait()
    cluster.cluster_sync()
    g[tidx] = Float32(cluster.block_rank_in_cluster())


@kernel
def k_clc_100(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    resp = _smem(cutlass.Int64, 4)
    bar = _smem(cutlass.Int64, 1)
    cluster.clc_try_cancel(resp, bar)
    cluster.clc_try_cancel_multicast(resp + 2, bar)
    g[tidx] = Float32(cluster.clc_is_canceled(resp) + cluster.clc_get_first_ctaid_x(resp)
                      + cluster.clc_get_first_ctaid_y(resp) + cluster.clc_get_first_ctaid_z(resp))


@kernel
def k_ieee(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    y = ieee_math.ieee_fadd(x, 1.0, "rz") + ieee_math.ieee_fsub(x, 2.0, "rm") + ieee_math.ieee_fmul(x, x, "rp")
    y = y + ieee_math.ieee_fmaf(x, x, x) + ieee_math.ieee_frcp(x) + ieee_math.ieee_fsqrt(x, "rz")
    y = y + ieee_math.ieee_fdiv(x, 3.0, "rn") + Float32(ieee_math.ieee_fadd(cutlass.Float64(x), 1.0))
    g[tidx] = y


@kernel
def k_utils(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    x = Float32(g[tidx])
    bits = utils.bitcast(x, cutlass.Uint32)
    packed = utils.pack_half2(cutlass.Float16(x), cutlass.Float16(2.0))
    regs = utils.make_filled_tensor((4,), Float32(1.5))
    loaded = utils.as_tensor_ssa(regs)
    halves = utils.cast_tensor(loaded, cutlass.Float16)
    back = utils.as_rmem_tensor(halves)
    view = utils.make_tensor_at_offset(g.iterator, 4, (4,), div_by=4)
    byte = utils.handle_add_byte_offset(g, 8)
    utils.sync_thread_partial(3, 128)
    y = Float32(bits & cutlass.Uint32(1)) + Float32(packed) + Float32(back[3]) + view[1] + Float32(byte[0])
    y = cutlass.select_(utils.shuffle_elect(64), y, y + 1.0)
    f = utils.recast_ptr(g.iterator, cutlass.Int32)
    g[tidx] = y + Float32(f.load())


@kernel
def k_reexports(g: cute.Tensor):
    tidx, _, _ = cutedsl_lib.thread_idx()
    cutedsl_lib.sync_threads()
    cutedsl_lib.runtime_assert(tidx < 128, "tidx in range")
    g[tidx] = Float32(1.0)


ptx_mma = importlib.import_module("tilelang_cuda.contrib.cutedsl.ptx_mma")  # the package's ptx_mma is a function


def _fragments():
    a, b, c = (cute.make_rmem_tensor(cute.make_layout(4), cutlass.Float64) for _ in range(3))
    for t in (a, b, c):
        t.fill(cutlass.Float64(0.5))
    return a.iterator, b.iterator, c.iterator


def _mma_all(g, names, sparse, *, generic=()):
    tidx, _, _ = cute.arch.thread_idx()
    a, b, c = _fragments()
    for name in names:
        fn = getattr(ptx_mma, name)
        if sparse:
            fn(a, 0, b, 0, c, 0, Int32(tidx), 0)
        else:
            fn(a, 0, b, 0, c, 0)
    for args in generic:
        if sparse:
            ptx_mma.ptx_mma_sp(*args, a, 0, b, 0, c, 0, Int32(tidx), 1)
        else:
            ptx_mma.ptx_mma(*args, a, 0, b, 0, c, 0)
    g[tidx] = Float32(cute.make_tensor(cute.recast_ptr(c, dtype=Float32), cute.make_layout(8))[tidx % 8])


MMA_80 = [n for n in ptx_mma._FUNCTIONS if n.startswith("ptx_mma_m") and "e4m3" not in n and "e5m2" not in n]
MMA_89 = [n for n in ptx_mma._FUNCTIONS if n.startswith("ptx_mma_m") and ("e4m3" in n or "e5m2" in n)]
MMA_SP = [n for n in ptx_mma._FUNCTIONS if n.startswith("ptx_mma_sp_m")]


@kernel
def k_mma_80(g: cute.Tensor):
    _mma_all(g, MMA_80, False, generic=[("m16n8k16", "row", "col", "float16", "float16", "float32")])


@kernel
def k_mma_fp8(g: cute.Tensor):
    _mma_all(g, MMA_89, False)


@kernel
def k_mma_sp_80(g: cute.Tensor):
    _mma_all(g, MMA_SP, True, generic=[("m16n8k32", "row", "col", "bfloat16", "bfloat16", "float32")])


@kernel
def k_quantize_80(g: cute.Tensor, i: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    out = cute.make_rmem_tensor(cute.make_layout(8), cutlass.Float16)
    quantize.decode_i4u_to_f16(i.iterator + tidx, out.iterator)
    quantize.decode_i4s_to_f16(i.iterator + tidx, out.iterator, 4)
    bf = cute.make_rmem_tensor(cute.make_layout(16), cutlass.BFloat16)
    quantize.decode_fp4_to_bf16_twiddling(i.iterator + tidx, bf.iterator, 2)
    g[tidx + 1] = Float32(bf[0]) + Float32(bf[15])
    g[tidx] = Float32(out[0]) + Float32(out[7])


@kernel
def k_wgmma(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    a_smem = _smem(cutlass.Float16, 64 * 64)
    b_smem = _smem(cutlass.Float16, 64 * 64)
    acc = cute.make_rmem_tensor(cute.make_layout(32), Float32)
    acc.fill(0.0)
    iacc = cute.make_rmem_tensor(cute.make_layout(32), Int32)
    iacc.fill(0)
    a_regs = cute.make_rmem_tensor(cute.make_layout(4), Int32)
    a_regs.fill(0)
    da, db = gemm_v2.GmmaDescriptor(), gemm_v2.GmmaDescriptor()
    gemm_v2.initialize_wgmma_descriptor(1, 1, 64, da, a_smem)
    gemm_v2.initialize_wgmma_descriptor(1, 1, 64, db, b_smem)
    gemm_v2.increase_descriptor_offset(db, 32)
    gemm_v2.warpgroup_fence_operand(acc)
    gemm_v2.warpgroup_arrive()
    gemm_v2.wgmma_ss("float16", "float16", "float32", 64, 64, 16, False, True, 1, 1, da, db + 2, acc.iterator, 1)
    gemm_v2.wgmma_rs("bfloat16", "bfloat16", "float32", 64, 64, 16, False, 1, -1, a_regs.iterator, db, acc.iterator,
                     0)
    gemm_v2.wgmma_ss("float8_e4m3", "float8_e5m2", "float32", 64, 64, 32, False, False, 1, 1, da, db, acc.iterator,
                     1)
    gemm_v2.wgmma_ss("int8", "int8", "int32", 64, 64, 32, False, False, 1, 1, da, db, iacc.iterator, 1)
    gemm_v2.wgmma_ss("float32", "float32", "float32", 64, 64, 8, False, False, 1, 1, da, db, acc.iterator, 1)
    gemm_v2.warpgroup_commit_batch()
    gemm_v2.warpgroup_wait(0)
    g[tidx] = acc[tidx % 32] + Float32(iacc[0])


@kernel
def k_tcgen05_100(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    holder = _smem(Int32, 4)
    bar = _smem(cutlass.Int64, 1)
    a_smem = _smem(cutlass.Float16, 128 * 64)
    gemm_tcgen05.tmem_allocate(holder, 128)
    gemm_tcgen05.tcgen05_before_thread_sync()
    cute.arch.sync_threads()
    gemm_tcgen05.tcgen05_after_thread_sync()
    tmem = holder[0]
    da, db = gemm_tcgen05.Tcgen05SmemDescriptor(), gemm_tcgen05.Tcgen05SmemDescriptor()
    gemm_tcgen05.initialize_tcgen05_descriptor(da, a_smem, 1, 64, 0, False, 2)
    gemm_tcgen05.initialize_tcgen05_descriptor(db, a_smem, 1, 64, 0, True, 2)
    gemm_tcgen05.tcgen05mma_ss("bfloat16", da, db + 32, tmem, 0x08100490, 0, 0, 0, 0, 0)
    gemm_tcgen05.tcgen05mma_ws_ss("float8_e4m3", da, db, tmem, 0x08100490, 1)
    gemm_tcgen05.tcgen05mma_ts("int8", tmem + 64, db, tmem, 0x08100490, 1, 0, 0, 0, 0)
    gemm_tcgen05.tcgen05_mma_arrive(bar)
    sf = _smem(cutlass.Uint32, 128)
    gemm_tcgen05.tcgen05_sf_warp_transpose(sf)
    gemm_tcgen05.tcgen05_cp_warpx4(sf, holder, 16)
    gemm_tcgen05.tcgen05mma_blockscaled_ss("float8_e4m3", da, db, tmem, 0x08100490, 1, tmem + 96, tmem + 100)
    regs = cute.make_rmem_tensor(cute.make_layout(64), Int32)
    gemm_tcgen05.tcgen05_ld_32dp32bNx(64, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_ld_32dp64bNx(4, False, tmem, 8, regs.iterator)
    gemm_tcgen05.tcgen05_ld_32dp128bNx(2, False, tmem, 8, regs.iterator)
    gemm_tcgen05.tcgen05_ld_32dp256bNx(1, False, tmem, 8, regs.iterator)
    gemm_tcgen05.tcgen05_ld_16dp64bNx(1, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_ld_16dp128bNx(4, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_ld_16dp256bNx(2, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_32dp32bNx(8, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_32dp64bNx(2, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_32dp128bNx(2, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_32dp256bNx(1, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_16dp64bNx(2, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_16dp128bNx(1, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tcgen05_st_16dp256bNx(1, False, tmem, 0, regs.iterator)
    gemm_tcgen05.tmem_deallocate(holder, 128)
    g[tidx] = Float32(regs[tidx % 64])


@kernel
def k_gemm_v1_80(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    a = _smem(cutlass.Float16, 64 * 32)
    b = _smem(cutlass.Float16, 64 * 32)
    acc = cute.make_rmem_tensor(cute.make_layout(64), Float32)
    ra = cute.make_rmem_tensor(cute.make_layout(64), cutlass.Float16)
    rb = cute.make_rmem_tensor(cute.make_layout(64), cutlass.Float16)
    gemm_v1.gemm_ss(64, 64, 32, 2, 2, False, True, True, 32, 32, 0, 0, False, 0, a, b, acc.iterator)
    gemm_v1.gemm_rs(64, 64, 32, 2, 2, False, True, False, 32, 32, 0, 0, False, 0, ra.iterator, b, acc.iterator)
    gemm_v1.gemm_sr(64, 64, 32, 2, 2, True, False, False, 32, 32, 0, 0, False, 0, a, rb.iterator, acc.iterator)
    gemm_v1.gemm_rr(64, 64, 32, 2, 2, False, True, False, 32, 32, 0, 0, False, 0, ra.iterator, rb.iterator,
                    acc.iterator)
    g[tidx] = acc[0]


@kernel
def k_gemm_v1_sm90(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    a = _smem(cutlass.Float16, 64 * 64)
    b = _smem(cutlass.Float16, 64 * 64)
    acc = cute.make_rmem_tensor(cute.make_layout(32), Float32)
    ra = cute.make_rmem_tensor(cute.make_layout(32), cutlass.Float16)
    gemm_v1.gemm_ss(64, 64, 64, 4, 1, False, True, True, 64, 64, 0, 0, True, 0, a, b, acc.iterator)
    gemm_v1.gemm_rs(64, 64, 64, 4, 1, False, False, False, 64, 64, 0, 0, True, -1, ra.iterator, b, acc.iterator)
    g[tidx] = acc[0]


@kernel
def k_setmaxnreg(g: cute.Tensor):
    utils.warpgroup_reg_alloc(232)
    utils.warpgroup_reg_dealloc(40)


@cute.jit
def _host(g: cute.Tensor, i: cute.Tensor, h: cute.Tensor, which: cutlass.Constexpr):
    fn, argc = KERNELS[which]
    fn(*(g, i, h)[:argc]).launch(grid=[1, 1, 1], block=[128, 1, 1])


def ptx(name: str, arch: str = "sm_90a") -> str:
    """The PTX of kernel `name` compiled for `arch` (writes a .ptx file into the working directory)."""
    import torch
    from cutlass.cute.runtime import from_dlpack

    g, i, h = (from_dlpack(torch.zeros(256, dtype=dtype)) for dtype in (torch.float32, torch.int32, torch.float16))
    compiled = cute.compile[cute.KeepPTX(), cute.GPUArch(arch)](_host, g, i, h, name)
    return compiled.artifacts.PTX
