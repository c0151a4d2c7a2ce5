"""The Metal backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import shutil
import sys

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_target_kind,
)


def _detect() -> dict | None:
    if sys.platform != "darwin":
        return None
    try:
        import torch
    except ImportError:
        return None
    return {"kind": "metal"} if torch.backends.mps.is_available() else None


def register() -> None:
    """Register the ``metal`` target kind, its codegen and execution backends (no heavy imports)."""
    register_target_kind(TargetKind("metal", detect=_detect, detect_priority=80, description="Apple GPUs",
                                    pipeline_options={"has_threads": True, "warp_size": 32,
                                                      "static_shared_memory": True}))
    register_lazy_device_codegen("metal", "tilelang_metal.codegen:METAL_CODEGEN")
    register_lazy_execution_backends("metal", "tilelang_metal.execution_backend:EXECUTION_BACKENDS")


def toolchain() -> list[ToolStatus]:
    """A clang for MSL syntax checks (Linux) or the Metal runtime (macOS)."""
    clang = next((p for p in (shutil.which(n) for n in ("clang", "clang-22", "clang-19")) if p), None)
    lines = [ToolStatus("clang (MSL syntax check)", clang is not None, clang or "not found: apt-get install clang")]
    device = _detect()
    lines.append(ToolStatus("Metal device", device is not None,
                            "MPS available" if device else "none (compile-only; running needs macOS with MPS)"))
    return lines


BACKEND = Backend(name="metal", target_kinds=("metal",), register=register, toolchain=toolchain,
                  description="Apple GPUs: MSL via TVM's Metal codegen, run through torch MPS.")
