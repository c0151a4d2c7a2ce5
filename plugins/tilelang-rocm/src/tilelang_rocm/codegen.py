"""Device codegen for ROCm: AMDGPU code objects through TVM's LLVM AMDGPU codegen, linked by ld.lld."""

from __future__ import annotations

import os
from typing import Any

from tilelang.backend import DeviceCodegen
from tilelang.errors import ToolchainMissing


def _ensure_bitcode_callback() -> None:
    """TVM asks for ROCm device-library bitcode; without a ROCm install, link with none (our kernels need none)."""
    import tvm_ffi

    if os.environ.get("ROCM_PATH") and os.path.isdir(os.path.join(os.environ["ROCM_PATH"], "amdgcn", "bitcode")):
        return
    tvm_ffi.register_global_func("tvm_callback_rocm_bitcode_path", lambda *args: [], override=True)


def _build_rocm(mod: Any, target: Any) -> Any:
    import tvm_ffi

    from tilelang_rocm.backend import find_ld_lld

    if find_ld_lld() is None:
        raise ToolchainMissing("linking AMDGPU code objects needs ld.lld: `apt-get install lld` (or lld-22)")
    _ensure_bitcode_callback()
    return tvm_ffi.get_global_func("target.build.rocm")(mod, target)


ROCM_CODEGEN = DeviceCodegen("rocm", build=_build_rocm)
