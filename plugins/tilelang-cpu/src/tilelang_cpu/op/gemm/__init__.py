"""CPU GEMM paths (``tilelang.cpu.op.gemm``), registered with core's GEMM-class registry
(``tilelang.tileop.gemm.registry``) when core provides one."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_cpu.op.gemm.gemm_scalar import GEMM_INST_SCALAR, GemmScalar

__all__ = ["GEMM_INST_SCALAR", "GemmScalar", "REGISTRATIONS"]

# (registry name, instruction family, class): the reference's registration
REGISTRATIONS: tuple[tuple[str, str, Any], ...] = (("cpu.scalar", GEMM_INST_SCALAR, GemmScalar),)


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
