"""The ROCm backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import shutil

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_lazy_tile_op_impls,
    register_target_kind,
)

# the pipeline options core reads for rocm (see tilelang.transform.pipeline)
PIPELINE_OPTIONS = {
    "has_threads": True,
    "warp_size": 64,  # CDNA; RDNA3 kernels run wave32 (the gemm reads the wave size from the mcpu)
    "static_shared_memory": True,  # TVM's ROCm codegen cannot synchronise dynamic LDS ("shared.dyn")
    "atomic_functions": {"add": "tl_atomic_add", "max": "tl_atomic_max", "min": "tl_atomic_min"},  # atomic.py
}


def _normalize(config: dict) -> dict:
    from tilelang_rocm.target import normalize

    return normalize(config)


def _detect() -> dict | None:
    from tilelang_rocm.target import detect

    return detect()


def register() -> None:
    """Register ``rocm`` and its alias ``hip``, the codegen and execution backends (no heavy imports)."""
    register_target_kind(TargetKind("rocm", normalize=_normalize, detect=_detect, detect_priority=90,
                                    description="AMD Instinct / RDNA GPUs", pipeline_options=PIPELINE_OPTIONS))
    register_target_kind(TargetKind("hip", normalize=_normalize, description="alias of rocm",
                                    pipeline_options=PIPELINE_OPTIONS))
    register_lazy_tile_op_impls("rocm", "tilelang_rocm.tileops:IMPLS")
    register_lazy_device_codegen("rocm", "tilelang_rocm.codegen:ROCM_CODEGEN")
    register_lazy_execution_backends("rocm", "tilelang_rocm.execution_backend:EXECUTION_BACKENDS")


def find_ld_lld() -> str | None:
    """ld.lld-22 (what CI installs), else ld.lld, else an older versioned Debian one."""
    for name in ("ld.lld-22", "ld.lld", *(f"ld.lld-{v}" for v in range(21, 14, -1))):
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
        ToolStatus("ld.lld", lld is not None, lld or "not found: apt-get install lld-22"),
        ToolStatus("GPU", gpu is not None, gpu["mcpu"] if gpu else "none visible (compile-only)"),
    ]


BACKEND = Backend(name="rocm", target_kinds=("rocm", "hip"), register=register, toolchain=toolchain,
                  hook_modules=("tilelang_rocm.hooks",),
                  description="AMD GPUs: LLVM AMDGPU code objects (hsaco) linked with ld.lld.")
