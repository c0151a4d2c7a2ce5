"""The carver: hardware-aware tile recommendations (the roller) for TileLang kernels.

``tilelang.carver.arch`` models devices (`CUDA`, `CDNA`, `RDNA`, `METAL`, `CPU`); templates
(`MatmulTemplate`, `GEMVTemplate`, ...) describe a computation; ``recommend_hints`` returns `Hint`s whose block,
warp/thread, reduction step and pipeline depth parameterise a kernel (and its ``tilelang.autotune`` configs).
"""

from tilelang.carver import utils
from tilelang.carver.analysis import (
    BlockInfo,
    IterInfo,
    collect_block_iter_vars_used_in_access_region,
    collect_vars_used_in_prim_expr,
    detect_dominant_read,
    is_broadcast_epilogue,
    normalize_prim_func,
)
from tilelang.carver.arch import CDNA, CPU, CUDA, METAL, RDNA
from tilelang.carver.common_schedules import get_block, get_output_blocks, try_inline, try_inline_contiguous_spatial
from tilelang.carver.roller import (
    DefaultPolicy,
    Edge,
    Hint,
    NoRasterization,
    OutputNode,
    PrimFuncNode,
    Rasterization2DColumn,
    Rasterization2DRow,
    TensorCorePolicy,
    TileDevice,
)
from tilelang.carver.template import (
    ConvTemplate,
    ElementwiseTemplate,
    FlashAttentionTemplate,
    GEMVTemplate,
    GeneralReductionTemplate,
    MatmulTemplate,
)

__all__ = [
    "BlockInfo", "IterInfo", "collect_block_iter_vars_used_in_access_region", "collect_vars_used_in_prim_expr",
    "detect_dominant_read", "is_broadcast_epilogue", "normalize_prim_func", "get_block", "get_output_blocks",
    "try_inline", "try_inline_contiguous_spatial", "PrimFuncNode", "OutputNode", "Edge", "NoRasterization",
    "Rasterization2DRow", "Rasterization2DColumn", "Hint", "DefaultPolicy", "TensorCorePolicy", "TileDevice",
    "CUDA", "CDNA", "RDNA", "METAL", "CPU", "MatmulTemplate", "GEMVTemplate", "ElementwiseTemplate",
    "GeneralReductionTemplate", "FlashAttentionTemplate", "ConvTemplate", "utils",
]
