"""The CUDA dialect's intrinsic surface for hand-written tensor-core kernels (``tilelang.cuda.language.intrinsics``):
the emitters, descriptor helpers and explicit wgmma / tcgen05 operations, gathered in one module."""

from __future__ import annotations

from tilelang.language import device_assert
from tilelang_cuda.intrinsics.layout.mma_layout import get_swizzle_layout, make_mma_swizzle_layout
from tilelang_cuda.intrinsics.layout.utils import get_ldmatrix_offset, get_mma_micro_size, mma_store_index_map
from tilelang_cuda.intrinsics.macro.mma_macro_generator import (
    TensorCoreIntrinEmitter,
    TensorCoreIntrinEmitterWithLadderTransform,
)
from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import TensorCoreIntrinEmitterSM120
from tilelang_cuda.intrinsics.macro.mma_sp_macro_generator import SparseTensorCoreIntrinEmitter
from tilelang_cuda.intrinsics.macro.tcgen05_macro_generator import TCGEN05DescriptorParams, compute_umma_descriptor
from tilelang_cuda.intrinsics.macro.tcgen05_macro_generator import (
    TensorCoreIntrinEmitter as TCGEN05TensorCoreIntrinEmitter,
)
from tilelang_cuda.intrinsics.macro.wgmma_macro_generator import TensorCoreIntrinEmitter as WGMMATensorCoreIntrinEmitter
from tilelang_cuda.intrinsics.macro.wgmma_macro_generator import WGMMADescriptorParams, compute_gmma_descriptor
from tilelang_cuda.intrinsics.macro.wgmma_sp_macro_generator import WGSparseTensorCoreIntrinEmitter
from tilelang_cuda.language.api import (
    __ffs,
    __fns,
    __ldg,
    cp_async_barrier_noinc,
    wait_wgmma,
    warpgroup_arrive,
    warpgroup_commit_batch,
    warpgroup_fence_operand,
    warpgroup_wait,
)
from tilelang_cuda.language.tensorcore import (
    alloc_tcgen05_instr_desc,
    alloc_tcgen05_instruction_desc,
    alloc_tcgen05_smem_desc,
    alloc_wgmma_desc,
    initialize_tcgen05_descriptor,
    initialize_wgmma_descriptor,
    make_blockscaled_gemm_layout,
    mma_gemm_blockscaled,
    tcgen05_after_thread_sync,
    tcgen05_before_thread_sync,
    tcgen05_cp_warpx4,
    tcgen05_gemm,
    tcgen05_gemm_blockscaled,
    tcgen05_gemm_sp,
    tcgen05_mma,
    tcgen05_mma_arrive,
    tcgen05_mma_blockscaled,
    tcgen05_sf_warp_transpose,
    wgmma_gemm,
    wgmma_gemm_sp,
    wgmma_mma,
)
from tilelang_cuda.language.tir import (
    ptx_cp_async,
    ptx_cp_async_barrier,
    ptx_cp_async_bulk,
    ptx_ldmatrix,
    ptx_mma,
    ptx_mma_sp,
    ptx_tcgen05_mma_blockscaled_ss,
    ptx_tcgen05_mma_ss,
    ptx_tcgen05_mma_ts,
    ptx_wgmma_rs,
    ptx_wgmma_sp_rs,
    ptx_wgmma_sp_ss,
    ptx_wgmma_ss,
)

__all__ = ["SparseTensorCoreIntrinEmitter", "TCGEN05DescriptorParams", "TCGEN05TensorCoreIntrinEmitter",
           "TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterSM120", "TensorCoreIntrinEmitterWithLadderTransform",
           "WGMMADescriptorParams", "WGMMATensorCoreIntrinEmitter", "WGSparseTensorCoreIntrinEmitter", "__ffs",
           "__fns", "__ldg", "alloc_tcgen05_instr_desc", "alloc_tcgen05_instruction_desc", "alloc_tcgen05_smem_desc",
           "alloc_wgmma_desc", "compute_gmma_descriptor", "compute_umma_descriptor", "cp_async_barrier_noinc",
           "device_assert", "get_ldmatrix_offset", "get_mma_micro_size", "get_swizzle_layout",
           "initialize_tcgen05_descriptor", "initialize_wgmma_descriptor", "make_blockscaled_gemm_layout",
           "make_mma_swizzle_layout", "mma_store_index_map", "ptx_cp_async", "ptx_cp_async_barrier",
           "ptx_cp_async_bulk", "ptx_ldmatrix", "ptx_mma", "ptx_mma_sp", "ptx_tcgen05_mma_blockscaled_ss",
           "ptx_tcgen05_mma_ss", "ptx_tcgen05_mma_ts", "ptx_wgmma_rs", "ptx_wgmma_sp_rs", "ptx_wgmma_sp_ss",
           "ptx_wgmma_ss", "tcgen05_after_thread_sync", "tcgen05_before_thread_sync", "tcgen05_cp_warpx4",
           "tcgen05_gemm", "mma_gemm_blockscaled", "tcgen05_gemm_blockscaled", "tcgen05_gemm_sp", "tcgen05_mma",
           "tcgen05_mma_arrive", "tcgen05_mma_blockscaled", "tcgen05_sf_warp_transpose", "wait_wgmma",
           "warpgroup_arrive", "warpgroup_commit_batch", "warpgroup_fence_operand", "warpgroup_wait", "wgmma_gemm",
           "wgmma_gemm_sp", "wgmma_mma"]
