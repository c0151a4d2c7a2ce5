"""Which of TVM's TIR-script names belong to one backend (facts about the reference's classification).

``tilelang.language.tir.common`` and ``tilelang.language`` leave the backend-only ones out; a backend's dialect
(``tilelang.<backend>.language``) may provide them.
"""

CUDA_ONLY_TIR_EXPORTS = frozenset({
    "mma_fill", "mma_store", "ptx_cp_async_bulk", "ptx_fence_barrier_init", "ptx_ldmatrix", "ptx_mma",
    "ptx_mma_block_scale", "ptx_mma_sp", "ptx_tcgen05_mma_blockscaled_ss", "ptx_tcgen05_mma_ss",
    "ptx_tcgen05_mma_ts", "ptx_wait_barrier", "ptx_wgmma_rs", "ptx_wgmma_sp_rs", "ptx_wgmma_sp_ss", "ptx_wgmma_ss",
    "ptx_legacy",  # apache-tvm's namespace of the legacy PTX intrinsics
})
ROCM_ONLY_TIR_EXPORTS = frozenset({"tvm_mfma", "tvm_mfma_store", "tvm_rdna_wmma", "tvm_rdna_wmma_store"})
METAL_ONLY_TIR_EXPORTS = frozenset({
    "make_filled_simdgroup_matrix", "simdgroup_load", "simdgroup_multiply_accumulate", "simdgroup_store",
    # Metal 4 cooperative tensors (MetalPerformancePrimitives)
    "cooperative_tensor_fill", "cooperative_tensor_load", "cooperative_tensor_multiply_accumulate",
    "cooperative_tensor_store",
})
# PTX spellings that more than one backend lowers: they stay in the common surface
SHARED_LEGACY_TIR_EXPORTS = frozenset({
    "ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group", "ptx_cp_async",
    "ptx_cp_async_barrier", "ptx_init_barrier_thread_count", "ptx_wait_group",
})
BACKEND_ONLY_TIR_EXPORTS = CUDA_ONLY_TIR_EXPORTS | METAL_ONLY_TIR_EXPORTS | ROCM_ONLY_TIR_EXPORTS
CLASSIFIED_VENDOR_TIR_EXPORTS = BACKEND_ONLY_TIR_EXPORTS | SHARED_LEGACY_TIR_EXPORTS

__all__ = [
    "BACKEND_ONLY_TIR_EXPORTS", "CLASSIFIED_VENDOR_TIR_EXPORTS", "CUDA_ONLY_TIR_EXPORTS", "METAL_ONLY_TIR_EXPORTS",
    "ROCM_ONLY_TIR_EXPORTS", "SHARED_LEGACY_TIR_EXPORTS",
]
