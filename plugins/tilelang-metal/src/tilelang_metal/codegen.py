"""Device codegen for Metal: MSL through TVM's Metal codegen (threadgroup memory must be static).

The build refuses a kernel whose threadgroup memory exceeds the target's limit (32 KiB on Apple GPUs), naming
its buffers (`tilelang_metal.threadgroup_memory`), instead of leaving the failure to pipeline creation on a Mac.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_metal(mod: Any, target: Any) -> Any:
    import tvm_ffi

    from tilelang_metal.threadgroup_memory import check_threadgroup_memory, limit_of

    rt_mod = tvm_ffi.get_global_func("target.build.metal")(mod, target)
    check_threadgroup_memory(str(rt_mod.inspect_source()), limit_of(target))
    return rt_mod


METAL_CODEGEN = DeviceCodegen("metal", build=_build_metal)
