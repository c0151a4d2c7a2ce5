"""The ROCm backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import os
import shutil
import sys

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


_LLD_NAMES = ("ld.lld-22", "ld.lld", *(f"ld.lld-{v}" for v in range(21, 14, -1)))
LLD_MISSING = ("linking AMDGPU code objects needs ld.lld and none was found (ROCm's $ROCM_PATH/llvm/bin, PATH, the "
               "ziglang wheel): `pip install \"tilelang-rocm[lld]\"` (LLD from pip, in the ziglang wheel), a ROCm "
               "install, or `apt-get install lld-22`; TILELANG_LD_LLD=/path/to/ld.lld names one")


def _ziglang_lld() -> list[str] | None:
    """LLD from the ``ziglang`` distribution (the ``lld`` extra of tilelang-rocm): ``zig ld.lld``."""
    import importlib.util

    spec = importlib.util.find_spec("ziglang")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for name in ("zig", "zig.exe"):
            zig = os.path.join(folder, name)
            if os.path.isfile(zig) and os.access(zig, os.X_OK):
                return [zig, "ld.lld"]
    return [sys.executable, "-m", "ziglang", "ld.lld"]


def find_ld_lld() -> list[str] | None:
    """The command that runs ld.lld (arguments follow it), or None when there is none.

    Searched in order: ``$ROCM_PATH/llvm/bin`` and ``/opt/rocm/llvm/bin`` (where ROCm installs its LLD), then
    PATH (``ld.lld-22``, ``ld.lld``, then older versioned Debian ones), then the LLD bundled by the ``ziglang``
    distribution, so that ``pip install "tilelang-rocm[lld]"`` links code objects with no system package.
    ``TILELANG_LD_LLD`` names an ld.lld executable to use instead.
    """
    forced = os.environ.get("TILELANG_LD_LLD")
    if forced:
        return [forced]
    roots = [os.environ.get("ROCM_PATH"), "/opt/rocm"]
    for root in dict.fromkeys(r for r in roots if r):
        path = os.path.join(root, "llvm", "bin", "ld.lld")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path]
    for name in _LLD_NAMES:
        path = shutil.which(name)
        if path:
            return [path]
    return _ziglang_lld()


def toolchain() -> list[ToolStatus]:
    """ld.lld (links code objects: which one is used) and a visible AMD GPU."""
    lld = find_ld_lld()
    from tilelang_rocm.target import detect

    gpu = detect()
    return [
        ToolStatus("ld.lld", lld is not None, " ".join(lld) if lld else LLD_MISSING),
        ToolStatus("GPU", gpu is not None, gpu["mcpu"] if gpu else "none visible (compile-only)"),
    ]


BACKEND = Backend(name="rocm", target_kinds=("rocm", "hip"), register=register, toolchain=toolchain,
                  sdk_version="1.2",
                  description="AMD GPUs: LLVM AMDGPU code objects (hsaco) linked with ld.lld.",
                  callbacks={"tilelang_callback_hip_compile": "tilelang_rocm.compiler:tilelang_callback_hip_compile"})
