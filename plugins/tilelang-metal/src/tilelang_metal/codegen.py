"""Device codegen for Metal: MSL through TVM's Metal codegen (threadgroup memory must be static).

The build refuses a kernel whose threadgroup memory exceeds the target's limit (32 KiB on Apple GPUs), naming
its buffers (`tilelang_metal.threadgroup_memory`), instead of leaving the failure to pipeline creation on a Mac.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen


def _build_metal(mod: Any, target: Any) -> DeviceBuild:
    """The MSL module, with each kernel's threadgroup memory in ``metadata["threadgroup_memory"][kernel]``
    (``{"bytes": total, "buffers": {name: bytes}}``, read from the MSL after buffer sharing)."""
    import tvm_ffi

    from tilelang_metal.threadgroup_memory import check_threadgroup_memory, limit_of, report

    rt_mod = tvm_ffi.get_global_func("target.build.metal")(mod, target)
    usage = check_threadgroup_memory(str(rt_mod.inspect_source()), limit_of(target))
    return DeviceBuild(rt_mod=rt_mod, metadata={"threadgroup_memory": report(usage)})


def _postprocess_metal(source: str, target: Any) -> str:
    from tilelang_metal.prelude import add_prelude

    return add_prelude(source)


METAL_CODEGEN = DeviceCodegen("metal", build=_build_metal, postprocess=_postprocess_metal)
