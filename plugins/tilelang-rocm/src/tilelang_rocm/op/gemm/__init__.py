"""ROCm GEMM paths by instruction family (``tilelang.rocm.op.gemm``), registered with core's GEMM registry
(``tilelang.tileop.gemm.registry``) when core provides it."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_rocm.op.gemm.gemm_mfma import GEMM_INST_MFMA, GemmMFMA
from tilelang_rocm.op.gemm.gemm_wmma import GEMM_INST_WMMA, GemmWMMA

__all__ = ["GEMM_INST_MFMA", "GEMM_INST_WMMA", "GemmMFMA", "GemmWMMA", "REGISTRATIONS"]

REGISTRATIONS: tuple[tuple[str, str, Any], ...] = (
    ("rocm.mfma", GEMM_INST_MFMA, GemmMFMA),
    ("rocm.wmma", GEMM_INST_WMMA, GemmWMMA),
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
