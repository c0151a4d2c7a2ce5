"""CUDA GEMM paths by instruction family (``tilelang.cuda.op.gemm``), registered with core's GEMM registry
(``tilelang.tileop.gemm.registry``) when core provides it."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_cuda.op.gemm.gemm_fma import GEMM_INST_FMA, GemmFMA
from tilelang_cuda.op.gemm.gemm_mma import GEMM_INST_MMA, GemmMMA
from tilelang_cuda.op.gemm.gemm_mma_sm70 import GemmMMASm70
from tilelang_cuda.op.gemm.gemm_mma_sm75 import GemmMMASm75
from tilelang_cuda.op.gemm.gemm_mma_sm120 import GEMM_INST_MMA_BLOCK_SCALED, GemmMMASm120BlockScaled
from tilelang_cuda.op.gemm.gemm_tcgen05 import GEMM_INST_TCGEN05, GemmTCGEN5
from tilelang_cuda.op.gemm.gemm_wgmma import GEMM_INST_WGMMA, GemmWGMMA

__all__ = ["GEMM_INST_FMA", "GEMM_INST_MMA", "GEMM_INST_MMA_BLOCK_SCALED", "GEMM_INST_TCGEN05", "GEMM_INST_WGMMA",
           "GemmFMA", "GemmMMA", "GemmMMASm70", "GemmMMASm75", "GemmMMASm120BlockScaled", "GemmTCGEN5",
           "GemmWGMMA", "REGISTRATIONS"]

# (registry name, instruction family, class): the reference's registrations
REGISTRATIONS: tuple[tuple[str, str, Any], ...] = (
    ("cuda.mma", GEMM_INST_MMA, GemmMMA),
    ("cuda.mma_sm70", GEMM_INST_MMA, GemmMMASm70),
    ("cuda.mma_sm75", GEMM_INST_MMA, GemmMMASm75),
    ("cuda.mma_sm120", GEMM_INST_MMA_BLOCK_SCALED, GemmMMASm120BlockScaled),
    ("cuda.fma", GEMM_INST_FMA, GemmFMA),
    ("cuda.wgmma", GEMM_INST_WGMMA, GemmWGMMA),
    ("cuda.tcgen05", GEMM_INST_TCGEN05, GemmTCGEN5),
)


def _register() -> None:
    if importlib.util.find_spec("tilelang.tileop.gemm") is None:
        return
    try:
        registry = importlib.import_module("tilelang.tileop.gemm.registry")
    except ImportError:  # this core has no GEMM-class registry
        return
    for name, inst, cls in REGISTRATIONS:
        registry.register_gemm_impl(name, inst, cls.matches, cls)


_register()
