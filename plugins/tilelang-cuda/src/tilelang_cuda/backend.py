"""The CUDA backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_lazy_passes,
    register_lazy_tile_op_impls,
    register_target_kind,
)
from tilelang_cuda.compiler import tilelang_callback_cuda_compile, tilelang_callback_cuda_validate  # noqa: F401
from tilelang_cuda.contrib import nvcc  # noqa: F401 (the reference's ``tilelang.cuda.backend.nvcc``)
from tilelang_cuda.target import is_plain_cuda_target

PIPELINE_OPTIONS = {
    "has_threads": True,
    "warp_size": 32,
    "partial_barriers": True,  # bar.sync id, count: core's InsertBarriers puts barriers inside warp-role branches
    # fragments hold runs of 16 bytes per thread (16-byte global loads / stores, see core's LayoutInference)
    "fragment_vector_bits": 128,
    "software_pipeline": True,  # core multi-buffers T.Pipelined; passes/async_pipeline.py overlaps the copies
    # float atomic max/min do not exist in CUDA: tilelang_cuda/atomic.cuh defines CAS-loop overloads
    "atomic_functions": {"add": "atomicAdd", "max": "tl_atomic_max", "min": "tl_atomic_min"},
}


# TVM global functions registered when the reference-style BackendModule is built (tilelang.backend.get_backend)
CALLBACKS = ("tilelang_callback_cuda_validate", "tilelang_callback_cuda_compile")


def _normalize(config: dict) -> dict:
    from tilelang_cuda.target import normalize

    return normalize(config)


def _detect() -> dict | None:
    from tilelang_cuda.target import detect

    return detect()


def register() -> None:
    """Register the ``cuda`` target kind, its codegen and execution backends (no heavy imports)."""
    register_target_kind(TargetKind("cuda", normalize=_normalize, detect=_detect, detect_priority=100,
                                    description="NVIDIA GPUs, sm_80 and newer",
                                    pipeline_options=PIPELINE_OPTIONS))
    register_lazy_device_codegen("cuda", "tilelang_cuda.codegen:CUDA_CODEGEN")
    register_lazy_passes("cuda", "tilelang_cuda.pipeline:PASSES")
    register_lazy_tile_op_impls("cuda", "tilelang_cuda.tileops:IMPLS")
    register_lazy_execution_backends("cuda", "tilelang_cuda.execution_backend:EXECUTION_BACKENDS")


def toolchain() -> list[ToolStatus]:
    """The compiler in use (nvcc or NVRTC, and why), nvcc, NVRTC with its headers, a visible GPU."""
    from tilelang_cuda.toolkit import toolchain_status

    return toolchain_status()


BACKEND = Backend(name="cuda", target_kinds=("cuda",), register=register, toolchain=toolchain,
                  sdk_version="1.5",
                  description="NVIDIA GPUs: CUDA C via TVM's CUDA codegen, nvcc/NVRTC to cubin.",
                  callbacks=tuple((name, f"tilelang_cuda.compiler:{name}") for name in CALLBACKS),
                  supports_target=is_plain_cuda_target)
