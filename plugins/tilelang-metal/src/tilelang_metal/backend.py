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
    register_lazy_passes,
    register_lazy_tile_op_impls,
    register_target_kind,
)

# the pipeline options core reads for metal (see tilelang.transform.pipeline)
PIPELINE_OPTIONS = {
    "has_threads": True,
    "warp_size": 32,
    "static_shared_memory": True,  # threadgroup memory is sized at compile time
    "fragment_vector_lanes": 8,  # 128-bit copies of 16-bit tiles (packed as uint4, passes/pack_half_vectors.py)
    "native_bf16": True,  # Metal 3.1 ``bfloat``: bf16 buffers, arithmetic and simdgroup_bfloat8x8 stay bf16
    "atomic_functions": {"add": "tl_atomic_add", "max": "tl_atomic_max", "min": "tl_atomic_min"},  # prelude.py
}


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
                                    pipeline_options=PIPELINE_OPTIONS))
    register_lazy_passes("metal", "tilelang_metal.pipeline:PASSES")
    register_lazy_tile_op_impls("metal", "tilelang_metal.tileops:IMPLS")
    register_lazy_device_codegen("metal", "tilelang_metal.codegen:METAL_CODEGEN")
    register_lazy_execution_backends("metal", "tilelang_metal.execution_backend:EXECUTION_BACKENDS")


def toolchain() -> list[ToolStatus]:
    """clang-22 for the MSL check (Linux) and the Metal device (macOS)."""
    clang = shutil.which("clang-22")
    lines = [ToolStatus("clang-22 (MSL check)", clang is not None, clang or "not found: apt-get install clang-22")]
    device = _detect()
    lines.append(ToolStatus("Metal device", device is not None,
                            "MPS available" if device else "none (compile-only; running needs macOS with MPS)"))
    return lines


BACKEND = Backend(name="metal", target_kinds=("metal",), register=register, toolchain=toolchain,
                  sdk_version="1.2",
                  description="Apple GPUs: MSL via TVM's Metal codegen, run through torch MPS.")
