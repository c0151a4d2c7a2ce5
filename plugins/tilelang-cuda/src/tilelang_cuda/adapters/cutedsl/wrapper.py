"""`TLCuTeDSLSourceWrapper`: in the reference, the generator of a CuTeDSL kernel's Python host module (argument
checks, TMA descriptors, launch through the CuTe DSL or a C++ launcher) from the lowered host and device modules.

That generator turns CuTe DSL device code emitted by the reference's CuTeDSL code generator into a runnable
module; this project emits no CuTe DSL code, so constructing the wrapper raises `CuTeDSLCodegenUnavailable`
(an ImportError naming ``pip install nvidia-cutlass-dsl`` first, when the CuTe DSL itself is missing).
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.adapters.cutedsl import checks
from tilelang_cuda.adapters.cutedsl.adapter import CODEGEN_UNAVAILABLE, CuTeDSLCodegenUnavailable

__all__ = ["TLCuTeDSLSourceWrapper"]


class TLCuTeDSLSourceWrapper:
    """The CuTeDSL host-module generator of the reference (not offered here: see the module docstring)."""

    def __init__(self, scheduled_ir_module: Any, source: str, target: Any, device_mod: Any = None,
                 host_mod: Any = None, pass_configs: dict[str, Any] | None = None):
        checks.check_cutedsl_available()
        raise CuTeDSLCodegenUnavailable(CODEGEN_UNAVAILABLE)
