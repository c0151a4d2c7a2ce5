"""Device codegen for WebGPU: WGSL through TVM's WebGPU codegen."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_webgpu(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.webgpu")(mod, target)


WEBGPU_CODEGEN = DeviceCodegen("webgpu", build=_build_webgpu)
