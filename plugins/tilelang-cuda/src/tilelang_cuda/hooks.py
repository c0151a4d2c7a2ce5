"""The CUDA backend's pluggy hooks: prepend the intrinsics header, compile every lowered kernel to cubin."""

from __future__ import annotations

from typing import Any

from tilelang.backend import hookimpl, kind_of


@hookimpl
def tilelang_postprocess_kernel_source(source: str, target: Any) -> str | None:
    """CUDA sources get the plugin's inline-PTX helpers (`tilelang_cuda.intrinsics`) in front (and TVM's bare
    special-float constants repaired: `tilelang_cuda.source_fixes`; tensor-map parameters: `tilelang_cuda.tma`;
    launch attributes: `tilelang_cuda.launch_markers`)."""
    if kind_of(target) != "cuda" or not source:
        return None
    from tilelang_cuda import launch_markers
    from tilelang_cuda.intrinsics import with_header
    from tilelang_cuda.source_fixes import fix_special_floats
    from tilelang_cuda.tma import rewrite_source

    return launch_markers.apply(with_header(rewrite_source(fix_special_floats(source))))


@hookimpl
def tilelang_artifact_built(artifact: Any) -> None:
    """Build ``kernel.cubin`` / ``kernel.ptx`` (and the ptxas report) as soon as tilelang.lower builds the kernel."""
    if artifact.target.get("kind") != "cuda" or "kernel.cubin" in artifact.files:
        return
    from tilelang_cuda.tma import tensor_maps_of

    maps = tensor_maps_of(artifact.kernel_source or "")
    if maps:  # the execution backend encodes these at launch
        artifact.metadata["tma_maps"] = maps
    from tilelang_cuda.compiler import compile_artifact, compiler_available

    if not compiler_available():  # source-only machines: lower() still returns the CUDA C; launching says why
        artifact.metadata["cuda_compiler"] = "unavailable"
        return
    compile_artifact(artifact)
