"""The CUDA backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import shutil
import subprocess

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_target_kind,
)


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
                                    pipeline_options={"has_threads": True, "warp_size": 32}))
    register_lazy_device_codegen("cuda", "tilelang_cuda.codegen:CUDA_CODEGEN")
    register_lazy_execution_backends("cuda", "tilelang_cuda.execution_backend:EXECUTION_BACKENDS")


def toolchain() -> list[ToolStatus]:
    """nvcc, and a visible GPU."""
    nvcc = shutil.which("nvcc")
    lines = []
    if nvcc:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
        release = next((ln.split("release")[-1].strip() for ln in out.splitlines() if "release" in ln), "?")
        lines.append(ToolStatus("nvcc", True, f"{nvcc} (release {release})"))
    else:
        lines.append(ToolStatus("nvcc", False, "not on PATH: install the CUDA toolkit or nvidia-cuda-nvcc"))
    from tilelang_cuda.target import detect

    gpu = detect()
    lines.append(ToolStatus("GPU", gpu is not None, gpu["arch"] if gpu else "none visible (compile-only)"))
    return lines


BACKEND = Backend(name="cuda", target_kinds=("cuda",), register=register, toolchain=toolchain,
                  description="NVIDIA GPUs: CUDA C via TVM's CUDA codegen, nvcc/NVRTC to cubin.")
