"""The ``cutedsl`` backend manifest: a variant of the CUDA backend for cuda targets with the ``cutedsl`` key.

Entry point ``cutedsl`` (a target kind of its own that normalises to such a cuda target once the CuTe DSL is
found installed); on kind ``cuda`` it registers the ``cutedsl`` device codegen and execution backend, and shares
the CUDA pass pipeline (core keeps one pipeline per kind).
"""

from __future__ import annotations

from tilelang.backend import (
    Backend,
    TargetKind,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_target_kind,
)
from tilelang_cuda.backend import PIPELINE_OPTIONS
from tilelang_cuda.target import is_cutedsl_target


def _normalize(config: dict) -> dict:
    from tilelang_cuda.target import normalize_cutedsl

    return normalize_cutedsl(config)


def register() -> None:
    """Register the ``cutedsl`` kind and, on ``cuda``, the CuTeDSL codegen and execution backend."""
    register_target_kind(TargetKind("cutedsl", normalize=_normalize, pipeline_options=PIPELINE_OPTIONS,
                                    description="CUDA through NVIDIA's CuTe DSL (normalises to a cuda target)"))
    register_lazy_device_codegen("cuda", "tilelang_cuda.cutedsl:CUTEDSL_CODEGEN")
    register_lazy_execution_backends("cuda", "tilelang_cuda.cutedsl:EXECUTION_BACKENDS")


BACKEND = Backend(name="cutedsl", target_kinds=("cutedsl", "cuda"), register=register,
                  sdk_version="1.0",
                  supports_target=is_cutedsl_target,
                  description="CuTeDSL variant of the CUDA backend (its code generator is not offered).")
