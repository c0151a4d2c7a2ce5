"""The CuTeDSL variant's parts: its device codegen and execution backend on target kind ``cuda``.

A CuTeDSL target is a cuda target with the ``cutedsl`` key; it shares the CUDA pass pipeline. The reference
TileLang generates CuTe DSL Python for it and runs that through NVIDIA's CuTe DSL; this plugin does not offer
that code generator: the codegen's build raises `CuTeDSLCodegenUnavailable` saying to compile for the plain
``cuda`` target instead, and the execution backend reports why it cannot run.
"""

from __future__ import annotations

from typing import Any, NoReturn

from tilelang.backend import DeviceCodegen, ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable
from tilelang_cuda.target import is_cutedsl_target

__all__ = ["CUTEDSL_CODEGEN", "CuTeDSLExecutionBackend", "EXECUTION_BACKENDS"]


def _cutedsl_missing() -> str | None:
    from tilelang_cuda.adapters.cutedsl.checks import check_cutedsl_available

    try:
        check_cutedsl_available()
    except ImportError as exc:
        return str(exc)
    return None


def _build_cutedsl(mod: Any, target: Any) -> NoReturn:
    from tilelang_cuda.adapters.cutedsl.adapter import CODEGEN_UNAVAILABLE, CuTeDSLCodegenUnavailable

    raise CuTeDSLCodegenUnavailable(CODEGEN_UNAVAILABLE)


# priority 1: the CUDA codegen accepts every cuda target, this one only those with the cutedsl key
CUTEDSL_CODEGEN = DeviceCodegen("cutedsl", build=_build_cutedsl, supports_target=is_cutedsl_target, priority=1,
                                build_without_compile=_build_cutedsl)


class CuTeDSLExecutionBackend(ExecutionBackend):
    """The ``cutedsl`` execution backend: serves CuTeDSL targets only; it cannot run kernels here (see the
    module docstring), and says whether the CuTe DSL package is missing too."""

    name = "cutedsl"
    description = "CuTe DSL Python modules (needs nvidia-cutlass-dsl and the reference's CuTeDSL code generator)"
    torch_device_type = "cuda"
    enable_host_codegen = False
    enable_device_compile = False

    def supports_target(self, target: Any) -> bool:
        return is_cutedsl_target(target)

    def is_installed(self) -> bool:
        return _cutedsl_missing() is None

    def unavailable_reason(self) -> str | None:
        missing = _cutedsl_missing()
        no_codegen = ("this project does not generate CuTe DSL kernels; compile for {'kind': 'cuda', 'arch': ...} "
                      "instead")
        return f"{missing}; also, {no_codegen}" if missing else no_codegen

    def load(self, artifact: Any) -> NoReturn:
        raise ExecutionBackendUnavailable(f"{self.name}: {self.unavailable_reason()}")


EXECUTION_BACKENDS = [CuTeDSLExecutionBackend()]
