"""The ROCm backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import shutil

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_target_kind,
)


def _normalize(config: dict) -> dict:
    from tilelang_rocm.target import normalize

    return normalize(config)


def _detect() -> dict | None:
    from tilelang_rocm.target import detect

    return detect()


def register() -> None:
    """Register ``rocm`` and its alias ``hip``, the codegen and execution backends (no heavy imports)."""
    options = {"has_threads": True, "warp_size": 64}
    register_target_kind(TargetKind("rocm", normalize=_normalize, detect=_detect, detect_priority=90,
                                    description="AMD Instinct / RDNA GPUs", pipeline_options=options))
    register_target_kind(TargetKind("hip", normalize=_normalize, description="alias of rocm",
                                    pipeline_options=options))
    register_lazy_device_codegen("rocm", "tilelang_rocm.codegen:ROCM_CODEGEN")
    register_lazy_execution_backends("rocm", "tilelang_rocm.execution_backend:EXECUTION_BACKENDS")


def find_ld_lld() -> str | None:
    """ld.lld, or a versioned Debian one (ld.lld-22 ... ld.lld-15)."""
    for name in ("ld.lld", *(f"ld.lld-{v}" for v in range(22, 14, -1))):
        path = shutil.which(name)
        if path:
            return path
    return None


def toolchain() -> list[ToolStatus]:
    """ld.lld (links code objects) and a visible AMD GPU."""
    lld = find_ld_lld()
    from tilelang_rocm.target import detect

    gpu = detect()
    return [
        ToolStatus("ld.lld", lld is not None, lld or "not found: apt-get install lld (or lld-22)"),
        ToolStatus("GPU", gpu is not None, gpu["mcpu"] if gpu else "none visible (compile-only)"),
    ]


BACKEND = Backend(name="rocm", target_kinds=("rocm", "hip"), register=register, toolchain=toolchain,
                  description="AMD GPUs: LLVM AMDGPU code objects (hsaco) linked with ld.lld.")
