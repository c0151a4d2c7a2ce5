"""Hand-written AMD matrix-core kernels: the MFMA (CDNA) and WMMA (RDNA) intrinsic emitters and their lane
layouts (the reference's ``tilelang.rocm.intrinsics``)."""

from __future__ import annotations

from tilelang_rocm.intrinsics.mfma_layout import make_mfma_swizzle_layout
from tilelang_rocm.intrinsics.mfma_macro_generator import MatrixCoreIntrinEmitter, MatrixCorePreshuffleIntrinEmitter
from tilelang_rocm.intrinsics.utils import get_mma_micro_size, mfma_store_index_map, mfma_store_index_map_32x32
from tilelang_rocm.intrinsics.wmma_macro_generator import WMMAIntrinEmitter

__all__ = ["MatrixCoreIntrinEmitter", "MatrixCorePreshuffleIntrinEmitter", "WMMAIntrinEmitter", "get_mma_micro_size",
           "make_mfma_swizzle_layout", "mfma_store_index_map", "mfma_store_index_map_32x32"]
