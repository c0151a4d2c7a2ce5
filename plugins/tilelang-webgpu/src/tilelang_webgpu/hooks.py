"""The WebGPU backend's pluggy hooks: make TVM's WGSL valid where its codegen is not (atomics)
read marked storage buffers as ``vec4`` arrays and keep constant-indexed local arrays in registers."""

from __future__ import annotations

from typing import Any

from tilelang.backend import hookimpl, kind_of


@hookimpl
def tilelang_postprocess_kernel_source(source: str, target: Any) -> str | None:
    """WGSL with atomics on plain arrays gets atomic arrays and CAS loops for f32 (`tilelang_webgpu.atomics`)."""
    if kind_of(target) != "webgpu" or not source:
        return None
    from tilelang_webgpu.atomics import legalize_atomics
    from tilelang_webgpu.scalarize import scalarize_local_arrays
    from tilelang_webgpu.subgroups import legalize_subgroup_builtins
    from tilelang_webgpu.vector_globals import vectorize_storage_views

    if "atomic" in source:
        source = legalize_atomics(source)
    return scalarize_local_arrays(vectorize_storage_views(legalize_subgroup_builtins(source)))
