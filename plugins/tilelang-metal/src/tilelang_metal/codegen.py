"""Device codegen for Metal: MSL through TVM's Metal codegen (threadgroup memory must be static)."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_metal(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.metal")(mod, target)


METAL_CODEGEN = DeviceCodegen("metal", build=_build_metal)
