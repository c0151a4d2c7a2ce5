"""Fragment layouts of CUDA tensor-core instructions: mma.sync (`mma_layout`, `utils`), Volta's m8n8k4
(`mma_sm70_layout`), sparse mma.sp (`mma_sp_layout`) and Blackwell's tensor-memory fragments
(`mma_sm100_layout`)."""

from tilelang_cuda.intrinsics.layout.mma_layout import get_swizzle_layout, make_mma_swizzle_layout
from tilelang_cuda.intrinsics.layout.utils import get_ldmatrix_offset, get_mma_micro_size, mma_store_index_map

__all__ = ["get_ldmatrix_offset", "get_mma_micro_size", "get_swizzle_layout", "make_mma_swizzle_layout",
           "mma_store_index_map"]
