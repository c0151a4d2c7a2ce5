"""Device codegen for WebGPU: WGSL through TVM's WebGPU codegen, then made valid where TVM's codegen is not
(`postprocess_wgsl`)."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_webgpu(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.webgpu")(mod, target)


def postprocess_wgsl(source: str, target: Any) -> str:
    """Atomics on plain arrays become atomic arrays with CAS loops for f32 (`tilelang_webgpu.atomics`), subgroup
    builtins get their declarations (`subgroups`), marked storage buffers are read as ``vec4`` arrays
    (`vector_globals`) and constant-indexed local arrays stay in registers (`scalarize`)."""
    from tilelang_webgpu.atomics import legalize_atomics
    from tilelang_webgpu.passes.mark_vector_globals import vectorize_storage_views
    from tilelang_webgpu.scalarize import scalarize_local_arrays
    from tilelang_webgpu.subgroups import legalize_subgroup_builtins

    if "atomic" in source:
        source = legalize_atomics(source)
    return scalarize_local_arrays(vectorize_storage_views(legalize_subgroup_builtins(source)))


WEBGPU_CODEGEN = DeviceCodegen("webgpu", build=_build_webgpu, postprocess=postprocess_wgsl)
