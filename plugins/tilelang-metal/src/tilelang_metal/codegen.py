"""Device codegen for Metal: MSL through TVM's Metal codegen (threadgroup memory must be static).

The build refuses a kernel whose threadgroup memory exceeds the target's limit (32 KiB on Apple GPUs), naming
its buffers (`tilelang_metal.threadgroup_memory`), instead of leaving the failure to pipeline creation on a Mac.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen


def _build_metal(mod: Any, target: Any) -> DeviceBuild:
    """The MSL module, with each kernel's threadgroup memory in ``metadata["threadgroup_memory"][kernel]``
    (``{"bytes": total, "buffers": {name: bytes}}``, read from the MSL after buffer sharing). Metal 4 GEMM and
    MLX-swizzled kernels get their signatures finished (`tilelang_metal.kernel_source`); that source is the
    artifact's."""
    import tvm_ffi

    from tilelang_metal.kernel_source import finish_kernels
    from tilelang_metal.threadgroup_memory import check_threadgroup_memory, limit_of, report

    rt_mod = tvm_ffi.get_global_func("target.build.metal")(mod, target)
    tvm_source = str(rt_mod.inspect_source())
    source = finish_kernels(tvm_source, mod)
    usage = check_threadgroup_memory(source, limit_of(target))
    return DeviceBuild(rt_mod=rt_mod, metadata={"threadgroup_memory": report(usage)},
                       source=None if source == tvm_source else source)


def _postprocess_metal(source: str, target: Any) -> str:
    from tilelang_metal.prelude import add_prelude

    return add_prelude(source)


METAL_CODEGEN = DeviceCodegen("metal", build=_build_metal, postprocess=_postprocess_metal)
