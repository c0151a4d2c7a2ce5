"""Metal GEMM paths (``tilelang.metal.op.gemm``), registered with core's GEMM-class registry
(``tilelang.tileop.gemm.registry``) when core provides one."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_metal.op.gemm.gemm_metal import (
    GEMM_INST_METAL,
    GEMM_INST_METAL_COOPERATIVE_TENSOR,
    GemmMetal,
    GemmMetalSimdGroup,
)

__all__ = ["GEMM_INST_METAL", "GEMM_INST_METAL_COOPERATIVE_TENSOR", "GemmMetal", "GemmMetalSimdGroup",
           "REGISTRATIONS"]

# (registry name, instruction family, class): the reference's registrations
REGISTRATIONS: tuple[tuple[str, str, Any], ...] = (
    (GEMM_INST_METAL, GEMM_INST_METAL, GemmMetalSimdGroup),
    (GEMM_INST_METAL_COOPERATIVE_TENSOR, GEMM_INST_METAL_COOPERATIVE_TENSOR, GemmMetal),
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
